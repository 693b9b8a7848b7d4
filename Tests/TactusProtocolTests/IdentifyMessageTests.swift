import Foundation
import TactusProtocol
import Testing

/// IDENTIFY and IDENTIFIED: version 2 only, bounded, and each file answered with either its
/// hash, size and time or an error.
@Suite struct IdentifyMessageTests {
    private func identified(_ json: String) -> [[UInt8]] {
        [ProtocolVersion.v2.frame, Array("IDENTIFIED".utf8), Array(json.utf8)]
    }

    @Test func identifyAndIdentifiedExistInVersion2Only() throws {
        var identify = try CoordinatorMessage.identify(
            IdentifyBody(request: 1, files: [JobLocation(root: "/music", path: "a.flac")])).frames()
        #expect(identify[0] == ProtocolVersion.v2.frame, "IDENTIFY is always sent in version 2")
        identify[0] = ProtocolVersion.v1.frame
        #expect(throws: ProtocolError.self) { try CoordinatorMessage(frames: identify) }
        var answer = identified(#"{"request":1,"files":[{"error":{"code":"not-found","message":"gone"}}]}"#)
        #expect(try WorkerMessage(frames: answer) == .identified(
            IdentifiedBody(request: 1, files: [FileIdentity(error: ErrorBody(code: .notFound, message: "gone"))])))
        answer[0] = ProtocolVersion.v1.frame
        #expect(throws: ProtocolError.self) { try WorkerMessage(frames: answer) }
    }

    @Test(arguments: [
        // Both a hash and an error; neither; a hash without its size; a hash in capitals; a negative size.
        #"{"request":1,"files":[{"sha256":"SONG","size":1,"mtime_ns":2,"error":{"code":"internal","message":"x"}}]}"#,
        #"{"request":1,"files":[{}]}"#,
        #"{"request":1,"files":[{"sha256":"SONG","mtime_ns":2}]}"#,
        #"{"request":1,"files":[{"sha256":"UPPER","size":1,"mtime_ns":2}]}"#,
        #"{"request":1,"files":[{"sha256":"SONG","size":-1,"mtime_ns":2}]}"#,
        #"{"request":0,"files":[{"sha256":"SONG","size":1,"mtime_ns":2}]}"#,
        #"{"request":1,"files":[]}"#,
    ])
    func anIdentifiedThatBreaksTheRulesIsRefused(body: String) throws {
        let song = String(repeating: "ab", count: 32)
        let json = body.replacingOccurrences(of: "SONG", with: song).replacingOccurrences(of: "UPPER", with: song.uppercased())
        #expect(throws: ProtocolError.self) { try WorkerMessage(frames: identified(json)) }
    }

    @Test func anIdentifyNamesOneTo64FilesBelowAnAbsoluteRoot() throws {
        let file = JobLocation(root: "/music", path: "a.flac")
        for files in [[], Array(repeating: file, count: IdentifyBody.maximumFiles + 1), [JobLocation(root: "/music", path: "../etc/passwd")]] {
            let body = [UInt8](try JSONEncoder().encode(IdentifyBody(request: 1, files: files)))
            let frames = [ProtocolVersion.v2.frame, Array("IDENTIFY".utf8), body]
            #expect(throws: ProtocolError.self) { try CoordinatorMessage(frames: frames) }
        }
        let most = IdentifyBody(request: 1, files: Array(repeating: file, count: IdentifyBody.maximumFiles))
        #expect(try CoordinatorMessage(frames: CoordinatorMessage.identify(most).frames()) == .identify(most))
    }
}
