import Foundation
import TactusTestSupport
import Testing

/// `tactus serve` refuses options that cannot work together: a library root that holds its data
/// directory, or lies inside it (a scan took the server's library and stored songs for music,
/// and `tags write --all` then rewrote a stored song under its content-addressed name), and more
/// local workers than connections one address may hold.
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

    /// Each local worker holds a connection from this host, so more workers than one address
    /// may hold connections would leave some refused for ever.
    @Test func moreLocalWorkersThanConnectionsFromOneAddressAreRefused() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-serve-options")
        let run = try CLI.runProgram(
            CLI.binary, ["serve", "--data", directory.file("data"), "--workers", "9", "--max-connections-per-address", "8", "--no-web"],
            timeout: .seconds(30))
        #expect(run.status == 2, "\(run.status): \(run.standardError)")
        #expect(run.standardError.contains("--workers 9 is more than --max-connections-per-address 8"), "\(run.standardError)")
    }
}
