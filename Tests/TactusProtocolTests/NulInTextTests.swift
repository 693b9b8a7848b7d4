import Foundation
import TactusProtocol
import Testing

/// A NUL in a path or a name is refused, naming the field: C calls end the text at the NUL, so
/// `real_001.mp3\0` was checked as one path and opened as another (a scan marked the file
/// present there as missing).
@Suite struct NulInTextTests {
    @Test(arguments: [
        (#"{"paths": ["/music/a.mp3\u0000"]}"#, "scan", "paths[0]"),
        (#"{"path": "/music/a.mp3\u0000xyz"}"#, "submit", "path"),
        (#"{"upload": "0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90", "name": "a\u0000.mp3"}"#, "submit", "name"),
        (#"{"names": ["/music/a.mp3\u0000"]}"#, "resolve", "names"),
    ])
    func aNulInTextIsABadRequestNamingTheField(body: String, command: String, field: String) {
        do {
            _ = try ClientRequest(frames: StretchMessageTests.frames(command, body))
            Issue.record("accepted \(body)")
        } catch {
            #expect(error.error.body.code == .badRequest)
            #expect(error.description.contains(field) && error.description.contains("NUL"), "\(error.description)")
        }
    }
}
