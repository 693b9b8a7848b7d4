import Foundation
import TactusModel
import TactusProtocol
import Testing

/// Full song ids on the wire (in replies, events, the worker protocol and an upload's SHA-256)
/// are decoded as ``SongID``s: written as their 64 lowercase hex digits, anything else is a
/// bad request naming the field. Requests name songs by prefix as before.
@Suite struct SongIDFieldTests {
    /// Text that is not a song id, though letters, digits and dashes are what a request's
    /// song name allows: a made-up name, the id in capitals, an id a digit short.
    static let notIDs = ["test-song-1", Examples.song.hex.uppercased(), String(Examples.song.hex.dropLast())]

    /// `frames` with every occurrence of the example song's id in a text frame replaced by `text`.
    private func replacingSong(in frames: [[UInt8]], with text: String) -> [[UInt8]] {
        frames.map { frame in
            guard let frameText = String(bytes: frame, encoding: .utf8) else { return frame }
            return Array(frameText.replacing(Examples.song.hex, with: text).utf8)
        }
    }

    private func expectSongIDError(_ error: ProtocolError?, field: String, _ comment: Comment) {
        guard case .invalidBody(_, let reported, let detail)? = error else {
            Issue.record("expected a field error, got \(String(describing: error)): \(comment)")
            return
        }
        #expect(reported == field, comment)
        #expect(detail.contains("a song id is 64 lowercase hex digits"), comment)
        #expect(error?.code == .badRequest, comment)
    }

    @Test(arguments: notIDs)
    func repliesEventsAndWorkerMessagesRefuseWhatIsNotAnID(text: String) throws {
        let submit = ClientReply(requestID: [1], .submit(SubmitResponse(song: Examples.song, jobs: Examples.jobs)))
        #expect(throws: Never.self) { try ClientReply(frames: submit.frames()) }
        do {
            _ = try ClientReply(frames: replacingSong(in: try submit.frames(), with: text))
            Issue.record("a submit reply naming the song '\(text)' was decoded")
        } catch {
            expectSongIDError(error, field: "song", "submit reply, '\(text)'")
        }

        let songDone = try #require(Examples.events.first { if case .songDone = $0 { true } else { false } })
        do {
            _ = try Event(frames: replacingSong(in: try songDone.frames(), with: text))
            Issue.record("a song.done event of the song '\(text)' was decoded")
        } catch {
            expectSongIDError(error, field: "song", "song.done, '\(text)'")
        }

        do {
            _ = try CoordinatorMessage(frames: replacingSong(in: try CoordinatorMessage.songJob(Examples.songJob, audio: Examples.audio).frames(), with: text))
            Issue.record("a JOB of the song '\(text)' was decoded")
        } catch {
            expectSongIDError(error, field: "song", "JOB, '\(text)'")
        }

        for message in Examples.workerMessages {
            let frames = try message.frames()
            guard replacingSong(in: frames, with: text) != frames else { continue }
            do {
                let decoded = try WorkerMessage(frames: replacingSong(in: frames, with: text))
                Issue.record("\(decoded) naming the song '\(text)' was decoded")
            } catch {
                let field = if case .identified = message { "files[0].sha256" } else { "song" }
                expectSongIDError(error, field: field, "\(message), '\(text)'")
            }
        }
    }

    @Test(arguments: notIDs)
    func anUploadBeginsWithTheSongsID(text: String) throws {
        let begin = ClientRequest(.upload(.begin(size: 1000, sha256: Examples.song), chunk: nil))
        #expect(throws: Never.self) { try ClientRequest(frames: begin.frames()) }
        let frames = replacingSong(in: try begin.frames(), with: text)
        do throws(RequestRejection) {
            _ = try ClientRequest(frames: frames)
            Issue.record("an upload announcing the SHA-256 '\(text)' was decoded")
        } catch {
            expectSongIDError(error.error, field: "sha256", "upload, '\(text)'")
        }
    }

    /// An id is written as its hex, the form the schemas and the other peers know.
    @Test func anIDIsWrittenAsItsHex() throws {
        let body = try JSONSerialization.jsonObject(
            with: Data(try ClientReply(requestID: [1], .truth(TruthResponse(song: Examples.song, reference: nil))).frames()[4]))
        #expect((body as? [String: Any])?["song"] as? String == Examples.song.hex)
    }

    /// A request names a song by its id or by a prefix of it, as before.
    @Test func requestsStillNameSongsByPrefix() throws {
        let prefix = String(Examples.song.hex.prefix(8))
        let request = ClientRequest(.result(ResultRequest(song: prefix)))
        #expect(try ClientRequest(frames: request.frames()).body == .result(ResultRequest(song: prefix)))
    }
}
