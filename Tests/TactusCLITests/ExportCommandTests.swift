import Foundation
import TactusTestSupport
import Testing

/// `export --rekordbox FILE` never replaces the library it reads, nor any SQLite database (a
/// server's library over --server), and replaces another existing file only with --force.
@Suite struct ExportCommandTests {
    @Test func theLibraryAndOtherDatabasesAreNeverReplacedAndAFileOnlyWithForce() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-export")
        let song = directory.file("song.wav")
        try AudioFileWriter(.wav16).write([Synth.drumPattern(seconds: 20, sampleRate: 22_050) { _ in 120 }], sampleRate: 22_050, to: song)
        let database = directory.file("lib.sqlite"), other = directory.file("other.sqlite")
        let analyzed = try CLI.run(["analyze", song, "--db", database])
        try #require(analyzed.status == 0, "\(analyzed.standardError)")
        try #require(try CLI.run(["analyze", song, "--db", other]).status == 0)
        let link = directory.file("link.sqlite")
        try FileManager.default.linkItem(atPath: database, toPath: link)
        let libraryBytes = try Data(contentsOf: URL(fileURLWithPath: database))

        func export(_ output: String, _ extra: [String] = []) throws -> CLI.Result {
            try CLI.run(["export", "--rekordbox", output, "--db", database] + extra)
        }
        for (output, extra, reason) in [
            (database, ["--force"], "it is the file being read"), (link, ["--force"], "it is the file being read"),
            (other, [], "it exists (give --force to replace it)"),
            (other, ["--force"], "it is a SQLite database or its write-ahead log"),
        ] {
            let run = try export(output, extra)
            #expect(run.status != 0, "\(output) \(extra): \(run.standardOutput)")
            #expect(run.standardError.contains(output) && run.standardError.contains(reason), "\(run.standardError)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == libraryBytes, "the library is unchanged")
        #expect(try CLI.run(["query", "--bpm", "20..400", "--db", other]).status == 0, "the other library still opens")

        let collection = directory.file("tactus.xml")
        #expect(try export(collection).status == 0)
        let again = try export(collection)
        #expect(again.status != 0 && again.standardError.contains("give --force"), "\(again.standardError)")
        let forced = try export(collection, ["--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(try String(contentsOfFile: collection, encoding: .utf8).contains("<DJ_PLAYLISTS"))
    }
}
