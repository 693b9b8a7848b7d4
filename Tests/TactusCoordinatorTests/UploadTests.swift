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

        guard case .ok(.upload(let begun)) = try client.request(.upload(.begin(size: Int64(song.count), sha256: sha256), chunk: nil))
        else { Issue.record("the upload was not begun"); return }
        #expect(begun.received == 0 && begun.size == Int64(song.count) && begun.chunkBytes == 1 << 20)
        var received: Int64 = 0
        var chunks = 0
        while received < Int64(song.count) {
            let end = min(Int(received) + begun.chunkBytes, song.count)
            let chunk = Array(song[Int(received)..<end])
            guard case .ok(.upload(let status)) = try client.request(.upload(.chunk(begun.upload, offset: received), chunk: chunk))
            else { Issue.record("chunk at \(received) refused"); return }
            chunks += 1
            if chunks == 2 {
                // The same chunk again (a client that timed out resends it): answered, not written twice.
                guard case .ok(.upload(let again)) = try client.request(.upload(.chunk(begun.upload, offset: received), chunk: chunk))
                else { Issue.record("a chunk sent again was refused"); return }
                #expect(again.received == status.received)
            }
            received = status.received
        }
        #expect(chunks == (song.count + begun.chunkBytes - 1) / begun.chunkBytes)

        let submit = ClientRequest.Body.submit(SubmitRequest(name: "long.wav", detectors: ["fake"], upload: begun.upload), audio: nil)
        guard case .ok(.submit(let submitted)) = try client.request(submit) else { Issue.record("the upload's submit failed"); return }
        #expect(submitted.song == sha256)
        #expect(submitted.jobs.map(\.detector) == ["fake"])
        guard case .ok(.submit(let again)) = try client.request(submit) else { Issue.record("the submit sent again failed"); return }
        #expect(again == submitted)
        // The upload's file is gone once submitted; the song is in the blob store.
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory.file("uploads"))).isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.file("blobs")))
        // Linked from the upload's file, not written again: the same bytes.
        let blob = directory.file("blobs/\(sha256.hex.prefix(2))/\(sha256)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: blob))) == song)
    }

    @Test func uploadsThatBreakTheRulesAreRefusedWithTheirCode() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxSongBytes = 4 << 20 }
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
        guard case .ok(.upload(let begun)) = try client.request(.upload(.begin(size: Int64(song.count), sha256: sha256), chunk: nil))
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
        guard case .ok(.upload) = try client.request(.upload(.chunk(begun.upload, offset: 0), chunk: first)) else {
            Issue.record("the first chunk was refused"); return
        }
        let submit = ClientRequest.Body.submit(SubmitRequest(detectors: ["fake"], upload: begun.upload), audio: nil)
        #expect(try code(submit) == .badRequest)

        // Bytes that are not those announced: refused at the submit, nothing stored.
        var other = song
        other[other.count - 1] ^= 0xFF
        guard case .ok(.upload(let wrong)) = try client.request(.upload(.begin(size: Int64(other.count), sha256: sha256), chunk: nil))
        else { Issue.record("the second upload was not begun"); return }
        var offset = 0
        while offset < other.count {
            let end = min(offset + wrong.chunkBytes, other.count)
            guard case .ok(.upload) = try client.request(.upload(.chunk(wrong.upload, offset: Int64(offset)), chunk: Array(other[offset..<end])))
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
        guard case .ok(.upload(let notes)) = try client.request(.upload(.begin(size: Int64(text.count), sha256: textID), chunk: nil))
        else { Issue.record("the third upload was not begun"); return }
        offset = 0
        while offset < text.count {
            let end = min(offset + notes.chunkBytes, text.count)
            guard case .ok(.upload) = try client.request(.upload(.chunk(notes.upload, offset: Int64(offset)), chunk: Array(text[offset..<end])))
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

    /// A song in one `submit` message above the inline limit is refused, naming the upload; a
    /// frame above the frontend's limit is dropped by libzmq before it is received whole, and
    /// the server goes on answering.
    @Test func largeSingleMessagesAreRefusedOrDropped() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) {
            $0.maxInlineSongBytes = 1 << 20
            $0.maxRecordingBytes = 1 << 20
        }
        defer { running.stop() }
        let song = try TestSong.clickTrack(bpm: 120, seconds: 30)
        #expect(song.count > 1 << 20 && song.count < 4 << 20)
        guard case .error(let refused) = try TestClient(running).request(.submit(SubmitRequest(detectors: ["fake"]), audio: song))
        else { Issue.record("a song over the inline limit was accepted in one message"); return }
        #expect(refused.code == .tooLarge && refused.message.contains("upload"), "\(refused.message)")

        // Over every frame limit (the body's, 4 MiB): the connection is dropped, nothing answered.
        let huge = [UInt8](repeating: 7, count: 6 << 20)
        #expect(try TestClient(running).request(.submit(SubmitRequest(detectors: ["fake"]), audio: huge), timeout: .seconds(2)) == nil)
        guard case .ok(.status) = try TestClient(running).request(.status(StatusRequest())) else {
            Issue.record("the server stopped answering"); return
        }
    }

    /// ``TactusClient/submit(_:audio:)`` sends a song larger than its inline limit as an upload.
    @Test func theClientUploadsLargeSongsInChunks() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxInlineSongBytes = 1 << 20 }
        defer { running.stop() }
        let client = try TactusClient(server: running.endpoints.frontend, timeout: .seconds(5))
        let song = try TestSong.clickTrack(bpm: 120, seconds: 30)
        let submitted = try client.submitWhileBusy(SubmitRequest(name: "big.wav", detectors: ["fake"]), audio: song)
        #expect(submitted.song == SongID(hashing: song))
        #expect(submitted.jobs.map(\.state) == [.queued])
    }
}
