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

    /// `tactus serve` keeps its local sockets in a directory under `$TMPDIR` that it removes
    /// when it stops; one killed (SIGKILL) cannot, and the next start removes what it left,
    /// and nothing else.
    @Test func theSocketDirectoriesOfKilledServersAreRemovedAtStart() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-serve-sockets")
        let temporary = directory.file("tmp")
        let abandoned = temporary + "/tactus-AbC123", kept = temporary + "/tactus-keep01"
        for folder in [abandoned, kept] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        // A Unix socket no process listens on any more (its process ended), and a folder that
        // holds something else.
        let bound = try CLI.runProgram(
            "/usr/bin/python3", ["-c", "import socket; socket.socket(socket.AF_UNIX).bind('\(abandoned)/frontend')"])
        try #require(bound.status == 0, "\(bound.standardError)")
        #expect(FileManager.default.createFile(atPath: kept + "/notes.txt", contents: Data("mine".utf8)))

        let server = try ServeProcess(
            dataDirectory: directory.file("data"), launcher: { line in ("/usr/bin/env", ["TMPDIR=" + temporary] + line) })
        let running = try FileManager.default.contentsOfDirectory(atPath: temporary).sorted()
        #expect(!running.contains("tactus-AbC123"), "the abandoned directory is removed")
        #expect(running.contains("tactus-keep01"), "a directory holding something else is kept")
        #expect(running.count == 2, "the server's own directory: \(running)")
        _ = server.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == ["tactus-keep01"], "removed when it stops")
    }
}
