import Foundation
import TactusModel
import TactusProtocol
import Testing

/// Error codes on the wire are ``ErrorCode``s wherever they appear (an error body, a tag report,
/// a name's problem, a failed analysis): written as their text, a code this version does not
/// know is kept as it came (a newer server's), and text that is no code is a bad request.
@Suite struct ErrorCodeFieldTests {
    /// A `tags` reply whose one report failed with `code`.
    private func tagsReply(code: String) -> [[UInt8]] {
        let body = #"{"files":[{"file":"/music/a.flac","outcome":"failed","reason":"/music/a.flac: no","code":"\#(code)"}]}"#
        return [Array("TACTUS1".utf8), Array("tags".utf8), [1], Array("ok".utf8), Array(body.utf8)]
    }

    @Test func aCodeUnknownToThisVersionIsKept() throws {
        let reply = try ClientReply(frames: tagsReply(code: "new-in-a-later-version"))
        guard let tags = reply.outcome.answer(TagsCommand.self) else {
            Issue.record("expected a tags reply, got \(reply.outcome)")
            return
        }
        #expect(tags.files.first?.code == ErrorCode(rawValue: "new-in-a-later-version"))
        let written = try JSONSerialization.jsonObject(with: Data(try reply.frames()[4])) as? [String: Any]
        #expect((written?["files"] as? [[String: Any]])?.first?["code"] as? String == "new-in-a-later-version")
    }

    @Test(arguments: ["Read Only", "", String(repeating: "x", count: 41), "read_only"])
    func textThatIsNoCodeIsABadRequest(code: String) throws {
        do {
            let reply = try ClientReply(frames: tagsReply(code: code))
            Issue.record("a tag report with the code '\(code)' was decoded: \(reply)")
        } catch {
            guard case .invalidBody(_, let field, _) = error else {
                Issue.record("expected a field error, got \(error)")
                return
            }
            #expect(field == "files[0].code" && error.code == .badRequest)
        }
    }

    /// The codes of a name's problem, of a failed analysis and of a tag report are written as
    /// their text, as the schemas have them.
    @Test func codesAreWrittenAsTheirText() throws {
        let problem = SongResolution(name: "intro", problem: .init(code: .ambiguous, message: "several songs"))
        let failure = AnalysisFailure(code: .workerLost, message: "lost")
        let encoded = String(decoding: try JSONEncoder().encode([problem]), as: UTF8.self)
            + String(decoding: try JSONEncoder().encode(failure), as: UTF8.self)
        #expect(encoded.contains(#""code":"ambiguous""#) && encoded.contains(#""code":"worker-lost""#), "\(encoded)")
        #expect(try JSONDecoder().decode(AnalysisFailure.self, from: Data(#"{"code":"worker-lost","message":"lost"}"#.utf8)) == failure)
    }
}
