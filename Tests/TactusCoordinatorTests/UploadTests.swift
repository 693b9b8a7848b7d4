import Foundation
import TactusClient
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// Songs sent in chunks (`upload`, SPEC section 3.9): the coordinator holds at most a chunk of
/// each in memory while it arrives, and libzmq never holds a whole large message (issue 13:
/// six 500 MiB uploads at once took 3 GB).
@Suite struct UploadTests {
    /// A song of several chunks: begun with its size and hash, sent chunk by chunk (a chunk sent
    /// again is not written twice), then submitted by its upload id; the song is the one whose
    /// bytes were sent, and a `submit` sent again gets the same answer.
    @Test func aSongSentInChunksIsSubmittedByItsUploadID() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let song = try TestSong.clickTrack(bpm: 120, seconds: 60)
        let sha256 = SongID(hashing: song)
        #expect(song.count > 2 << 20, "the song must take several chunks")

        guard let begun = try client.request(.upload(.begin(size: Int64(song.count), sha256: sha256), chunk: nil)).answer(UploadCommand.self)
        else { Issue.record("the upload was not begun"); return }
        #expect(begun.received == 0 && begun.size == Int64(song.count) && begun.chunkBytes == 1 << 20)
        var received: Int64 = 0
        var chunks = 0
        while received < Int64(song.count) {
            let end = min(Int(received) + begun.chunkBytes, song.count)
            let chunk = Array(song[Int(received)..<end])
            guard let status = try client.request(.upload(.chunk(begun.upload, offset: received), chunk: chunk)).answer(UploadCommand.self)
            else { Issue.record("chunk at \(received) refused"); return }
            chunks += 1
            if chunks == 2 {
                // The same chunk again (a client that timed out resends it): answered, not written twice.
                guard let again = try client.request(.upload(.chunk(begun.upload, offset: received), chunk: chunk)).answer(UploadCommand.self)
                else { Issue.record("a chunk sent again was refused"); return }
                #expect(again.received == status.received)
            }
            received = status.received
        }
        #expect(chunks == (song.count + begun.chunkBytes - 1) / begun.chunkBytes)

        let submit = ClientRequest.Body.submit(SubmitRequest(name: "long.wav", detectors: ["fake"], upload: begun.upload), audio: nil)
        guard let submitted = try client.request(submit).answer(SubmitCommand.self) else { Issue.record("the upload's submit failed"); return }
        #expect(submitted.song == sha256)
        #expect(submitted.jobs.map(\.detector) == ["fake"])
        guard let again = try client.request(submit).answer(SubmitCommand.self) else { Issue.record("the submit sent again failed"); return }
        #expect(again == submitted)
        // The upload's file is gone once submitted; the song is in the blob store.
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory.file("uploads"))).isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.file("blobs")))
        // Linked from the upload's file, not written again: the same bytes.
        let blob = directory.file("blobs/\(sha256.hex.prefix(2))/\(sha256)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: blob))) == song)
    }

    /// An upload whose bytes are refused for what they are (not audio) goes at once, its file
    /// and its place with it: a client may upload as many such files in a row as it likes (the
    /// fourth attack round found each kept for two minutes, the ninth upload `busy`).
    @Test func anUploadRefusedForItsBytesIsRemovedAtOnce() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        for n in 0..<12 {
            let bytes = [UInt8]("not audio at all, number \(n)\n".utf8) + [UInt8](repeating: UInt8(n), count: 4096)
            let begun = try #require(
                try client.request(.upload(.begin(size: Int64(bytes.count), sha256: SongID(hashing: bytes)), chunk: nil)).answer(UploadCommand.self),
                "upload \(n) begun")
            _ = try #require(try client.request(.upload(.chunk(begun.upload, offset: 0), chunk: bytes)).answer(UploadCommand.self))
            let submit = ClientRequest.Body.submit(SubmitRequest(name: "notes-\(n).mp3", detectors: ["fake"], upload: begun.upload), audio: nil)
            guard case .error(let error) = try client.request(submit) else { Issue.record("upload \(n) was taken"); return }
            #expect(error.code == .unsupportedFormat)
            #expect((try FileManager.default.contentsOfDirectory(atPath: directory.file("uploads"))).isEmpty, "upload \(n)'s file is gone")
        }
    }

    @Test func uploadsThatBreakTheRulesAreRefusedWithTheirCode() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) {
            $0.maxSongBytes = 4 << 20
            // Frames larger than a chunk reach the coordinator (by default libzmq drops them).
            $0.maxInlineSongBytes = 4 << 20
        }
        defer { running.stop() }
        let client = try TestClient(running)
        let song = try TestSong.clickTrack(bpm: 120, seconds: 30)
        let sha256 = SongID(hashing: song)

        func code(_ body: ClientRequest.Body, using sender: TestClient? = nil) throws -> ErrorCode? {
            guard case .error(let error) = try (sender ?? client).request(body) else { return nil }
            return error.code
        }
        // Over the song size limit: refused at the beginning, before a byte is sent.
        #expect(try code(.upload(.begin(size: 5 << 20, sha256: sha256), chunk: nil)) == .tooLarge)
        guard let begun = try client.request(.upload(.begin(size: Int64(song.count), sha256: sha256), chunk: nil)).answer(UploadCommand.self)
        else { Issue.record("the upload was not begun"); return }
        let first = Array(song[0..<begun.chunkBytes])
        // Chunks come in order, from byte 0; an offset beyond any size is refused, not overflowed.
        #expect(try code(.upload(.chunk(begun.upload, offset: 5), chunk: first)) == .badRequest)
        #expect(try code(.upload(.chunk(begun.upload, offset: .max), chunk: first)) == .badRequest)
        #expect(try code(.upload(.chunk(begun.upload, offset: UploadRequest.maxSize), chunk: first)) == .badRequest)
        // Another client does not see this client's upload; an unknown id is not found.
        #expect(try code(.upload(.chunk(begun.upload, offset: 0), chunk: first), using: try TestClient(running)) == .notFound)
        #expect(try code(.upload(.chunk("no-such-upload", offset: 0), chunk: first)) == .notFound)
        // A chunk larger than chunk_bytes.
        #expect(try code(.upload(.chunk(begun.upload, offset: 0), chunk: song)) == .tooLarge)
        // Submitting before every byte has arrived.
        guard try client.request(.upload(.chunk(begun.upload, offset: 0), chunk: first)).answer(UploadCommand.self) != nil else {
            Issue.record("the first chunk was refused"); return
        }
        let submit = ClientRequest.Body.submit(SubmitRequest(detectors: ["fake"], upload: begun.upload), audio: nil)
        #expect(try code(submit) == .badRequest)

        // Bytes that are not those announced: refused at the submit, nothing stored.
        var other = song
        other[other.count - 1] ^= 0xFF
        guard let wrong = try client.request(.upload(.begin(size: Int64(other.count), sha256: sha256), chunk: nil)).answer(UploadCommand.self)
        else { Issue.record("the second upload was not begun"); return }
        var offset = 0
        while offset < other.count {
            let end = min(offset + wrong.chunkBytes, other.count)
            guard try client.request(.upload(.chunk(wrong.upload, offset: Int64(offset)), chunk: Array(other[offset..<end]))).answer(UploadCommand.self) != nil
            else { Issue.record("a chunk of the second upload was refused"); return }
            offset = end
        }
        guard case .error(let mismatch) = try client.request(.submit(SubmitRequest(detectors: ["fake"], upload: wrong.upload), audio: nil))
        else { Issue.record("bytes that are not those announced were accepted"); return }
        #expect(mismatch.code == .badRequest && mismatch.message.contains("SHA-256"), "\(mismatch.message)")

        // Bytes that are not audio: read through the upload's file, refused under the client's
        // name for them (not the server's file), nothing stored.
        let text = [UInt8](repeating: UInt8(ascii: "x"), count: (2 << 20) + 5)
        let textID = SongID(hashing: text)
        guard let notes = try client.request(.upload(.begin(size: Int64(text.count), sha256: textID), chunk: nil)).answer(UploadCommand.self)
        else { Issue.record("the third upload was not begun"); return }
        offset = 0
        while offset < text.count {
            let end = min(offset + notes.chunkBytes, text.count)
            guard try client.request(.upload(.chunk(notes.upload, offset: Int64(offset)), chunk: Array(text[offset..<end]))).answer(UploadCommand.self) != nil
            else { Issue.record("a chunk of the third upload was refused"); return }
            offset = end
        }
        guard case .error(let notAudio) = try client.request(
            .submit(SubmitRequest(name: "notes.wav", detectors: ["fake"], upload: notes.upload), audio: nil))
        else { Issue.record("bytes that are not audio were accepted"); return }
        #expect(notAudio.code == .unsupportedFormat, "\(notAudio)")
        #expect(notAudio.message.contains("notes.wav") && !notAudio.message.contains("uploads/"), "\(notAudio.message)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("blobs/\(textID.hex.prefix(2))/\(textID)")))
    }

    /// With the default settings the frontend takes no frame over 1 MiB: a song or a recording
    /// larger than that in one message drops its connection unanswered (libzmq refuses the
    /// frame from its size, before holding any of it), a chunk of 1 MiB is taken, and the server
    /// goes on answering.
    @Test func framesOverAMebibyteAreDroppedByDefault() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let song = try TestSong.clickTrack(bpm: 120, seconds: 30)
        #expect(song.count > 1 << 20 && song.count < 4 << 20)
        #expect(try TestClient(running).request(.submit(SubmitRequest(detectors: ["fake"]), audio: song), timeout: .seconds(2)) == nil)
        let recording = CadenceRequestTests.recording(seconds: 600).csv
        #expect(recording.count > 1 << 20)
        #expect(try TestClient(running).request(.cadence(CadenceRequest(name: "run.csv"), recording: recording), timeout: .seconds(2)) == nil)

        let client = try TestClient(running)
        guard let begun = try client.request(
            .upload(.begin(size: Int64(song.count), sha256: SongID(hashing: song)), chunk: nil)).answer(UploadCommand.self)
        else { Issue.record("the server stopped answering"); return }
        #expect(begun.chunkBytes == 1 << 20)
        guard let status = try client.request(
            .upload(.chunk(begun.upload, offset: 0), chunk: Array(song[0..<begun.chunkBytes]))).answer(UploadCommand.self)
        else { Issue.record("a chunk of 1 MiB was refused"); return }
        #expect(status.received == 1 << 20)
    }

    /// A song in one `submit` message over the inline limit, when the server sets it below the
    /// frame limit, is refused, naming the upload.
    @Test func aSongOverTheInlineLimitIsRefusedNamingTheUpload() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxInlineSongBytes = 256 << 10 }
        defer { running.stop() }
        let song = try TestSong.clickTrack(bpm: 120, seconds: 8)
        #expect(song.count > 256 << 10 && song.count < 1 << 20)
        guard case .error(let refused) = try TestClient(running).request(.submit(SubmitRequest(detectors: ["fake"]), audio: song))
        else { Issue.record("a song over the inline limit was accepted in one message"); return }
        #expect(refused.code == .tooLarge && refused.message.contains("upload"), "\(refused.message)")
    }

    /// ``TactusClient/submit(_:audio:)`` sends a song larger than its inline limit as an upload.
    @Test func theClientUploadsLargeSongsInChunks() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TactusClient(server: running.endpoints.frontend, timeout: .seconds(5))
        let song = try TestSong.clickTrack(bpm: 120, seconds: 30)
        let submitted = try client.submitWhileBusy(SubmitRequest(name: "big.wav", detectors: ["fake"]), audio: song)
        #expect(submitted.song == SongID(hashing: song))
        #expect(submitted.jobs.map(\.state) == [.queued])
    }

    /// One address may not take every upload place by declaring large uploads over many
    /// connections (and sending a chunk now and then): its open uploads declare at most a
    /// quarter of the server's; another address still begins one.
    @Test func oneAddressDeclaresAtMostAQuarterOfTheUploads() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxSongBytes = 1 << 20 }
        defer { running.stop() }
        let size = Int64(1 << 20)
        let begin = ClientRequest.Body.upload(.begin(size: size, sha256: SongID(hashing: [1, 2, 3])), chunk: nil)
        // The server's uploads may declare 8 songs' bytes: a quarter is two of them.
        let clients = try (0..<3).map { _ in try TestClient(running) }
        #expect(try clients[0].request(begin).answer(UploadCommand.self) != nil)
        #expect(try clients[1].request(begin).answer(UploadCommand.self) != nil)
        guard case .error(let refused) = try clients[2].request(begin) else {
            Issue.record("a third upload from 127.0.0.1 was begun")
            return
        }
        #expect(refused.code == .busy && refused.message.contains("your address"))

        let elsewhere = try running.context.socket(.dealer)
        let port = running.endpoints.frontend.split(separator: ":").last!
        try elsewhere.connect("tcp://127.0.0.2:0;127.0.0.1:\(port)")
        try elsewhere.send(try ClientRequest(requestID: Array("e1".utf8), begin).frames())
        let answer = try #require(try elsewhere.receive(timeout: .seconds(10)))
        #expect(try ClientReply(frames: answer, commands: .standard).outcome.answer(UploadCommand.self) != nil, "127.0.0.2 begins one")
    }
}
