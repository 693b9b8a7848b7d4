import Foundation
import TactusTestSupport
import Testing

/// `tactus serve` refuses a library root that holds its data directory, or lies inside it: a
/// scan took the server's library and stored songs for music, and `tags write --all` then
/// rewrote a stored song under its content-addressed name.
@Suite struct ServeOptionsTests {
    @Test func aLibraryRootHoldingTheDataDirectoryIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-serve-options")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for (data, root, said) in [
            (music + "/data", music, "holds the data directory"), (directory.path, music, "is inside the data directory"),
        ] {
            let run = try CLI.runProgram(
                CLI.binary, ["serve", "--data", data, "--library-root", root, "--no-web", "--no-local-workers"], timeout: .seconds(30))
            #expect(run.status == 2, "\(run.status): \(run.standardError)")
            #expect(run.standardError.contains("--library-root \(root) \(said)"), "\(run.standardError)")
        }
    }
}
