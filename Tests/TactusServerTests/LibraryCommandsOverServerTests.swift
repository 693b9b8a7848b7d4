import Foundation
import TactusTestSupport
import Testing

/// `query`, `compare`, `playlist` and `truth` (`import` too) through `tactus serve` print exactly
/// what they print with `--db` on the server's own library file.
@Suite struct LibraryCommandsOverServerTests {
    @Test func theServerAnswersLikeTheLibraryFile() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-library-server")
        let data = directory.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let database = data + "/library.sqlite"
        let slow = directory.file("slow.flac"), fast = directory.file("fast.wav")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 100, seconds: 12, sampleRate: 22_050)], sampleRate: 22_050, to: slow)
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 140, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: fast)
        // The server opens the library file that `analyze` wrote.
        let analysed = try CLI.run(["analyze", slow, fast, "--db", database, "--json"])
        try #require(analysed.status == 0, "\(analysed.standardError)")
        let slowSong = try #require(analysed.jsonLines.first?["song"] as? String)

        let server = try ServeProcess(dataDirectory: data, extraArguments: ["--no-local-workers"])
        let frontend = server.endpoints.frontend

        /// Runs a command with `--db`, then through the server; both must succeed alike.
        func bothWays(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> CLI.Result {
            let offline = try CLI.run(arguments + ["--db", database])
            let online = try CLI.run(arguments + ["--server", frontend])
            #expect(offline.status == 0, "\(arguments) --db: \(offline.standardError)", sourceLocation: sourceLocation)
            #expect(online.status == offline.status, "\(arguments) --server: \(online.standardError)", sourceLocation: sourceLocation)
            #expect(online.standardOutput == offline.standardOutput, "\(arguments)", sourceLocation: sourceLocation)
            #expect(!offline.standardOutput.isEmpty, sourceLocation: sourceLocation)
            return online
        }

        let everything = try bothWays(["query", "--bpm", "60..200", "--json"])
        #expect(everything.jsonLines.count == 2)
        // The JSON lines are the protocol's answers (checked against the commands' reply schemas).
        #expect(try ReplySchema.problems(of: everything.standardOutput, command: "query", part: "/properties/songs/items") == nil)
        _ = try bothWays(["query", "--bpm", "95..105"])
        let octave = try bothWays(["query", "--bpm", "45..55", "--octave", "--order", "bpm", "--json"])
        #expect(octave.jsonLines.map { $0["song"] as? String } == [slowSong])
        #expect(octave.jsonLines.first?["factor"] as? Double == 2)
        _ = try bothWays(["compare", String(slowSong.prefix(10))])
        let comparedFile = try bothWays(["compare", fast, "--json"])  // a file: hashed by the client
        #expect(try ReplySchema.problems(of: comparedFile.standardOutput, command: "compare", part: "/properties/song") == nil)
        _ = try bothWays(["compare", "--bin-width", "20"])
        // One line per entry, its match's fields inlined: not the reply's nesting.
        _ = try bothWays(["playlist", "--cadence", "140", "--minutes", "1", "--json"])
        _ = try bothWays(["playlist", "--profile", "10s@100,10s@140"])

        // A reference tempo set through the server is the library's: `--db` reads it. Writing
        // the running server's library with `--db` is refused (the server is its only writer),
        // and nothing is set.
        let set = try CLI.run(["truth", "--server", frontend, "set", slow, "101", "--json"])
        #expect(set.status == 0, "\(set.standardError)")
        #expect(set.jsonLines.first?["bpm"] as? Double == 101)
        #expect(set.jsonLines.first?["song"] as? String == slowSong)
        #expect(try ReplySchema.problems(of: set.standardOutput, command: "truth", part: "/properties/reference") == nil)
        let setOffline = try CLI.run(["truth", "--db", database, "set", fast, "70", "--json"])
        #expect(setOffline.status == 1)
        #expect(setOffline.standardError.contains("\(database) is in use by another writer"), "\(setOffline.standardError)")
        let unset = try bothWays(["compare", fast, "--json"])
        #expect(unset.jsonLines.first?["song"] != nil && unset.jsonLines.first?["reference"] as? [String: Any] == nil, "\(unset.standardOutput)")
        let setOnline = try CLI.run(["truth", "--server", frontend, "set", fast, "70", "--json"])
        #expect(setOnline.status == 0, "\(setOnline.standardError)")
        let compared = try bothWays(["compare", slowSong, "--json"])
        let reference = try #require(compared.jsonLines.first?["reference"] as? [String: Any])
        #expect(reference["bpm"] as? Double == 101 && reference["source"] as? String == "manual")
        let fastCompared = try bothWays(["compare", fast, "--json"])
        #expect((fastCompared.jsonLines.first?["reference"] as? [String: Any])?["bpm"] as? Double == 70)
        _ = try bothWays(["compare", "--json"])

        // $TACTUS_SERVER names the server when --server is absent.
        let fromEnvironment = try CLI.run(["query", "--bpm", "60..200", "--json"], environment: ["TACTUS_SERVER": frontend])
        #expect(fromEnvironment.status == 0 && fromEnvironment.standardOutput == everything.standardOutput)

        // Refusals: the library's message in both modes, exit status 1.
        let unknownOffline = try CLI.run(["compare", "ffffffff", "--db", database])
        let unknownOnline = try CLI.run(["compare", "ffffffff", "--server", frontend])
        #expect(unknownOffline.status == 1 && unknownOnline.status == 1)
        #expect(unknownOnline.standardError.hasPrefix("Error: ") && unknownOnline.standardError.contains("ffffffff"))
        #expect(unknownOnline.standardError == unknownOffline.standardError)
        let badProfile = try CLI.run(["playlist", "--profile", "10x@150", "--server", frontend])
        #expect(badProfile.status == 1 && badProfile.standardError.hasPrefix("Error: playlist: field 'profile'"))

        // `truth import` over the server: the files beside the CSV hashed here, every line's
        // song resolved before anything is set, then one request sets them all.
        let csv = directory.file("tempi.csv")
        try "file,bpm\nslow.flac,100\nfast.wav,140\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let importOnline = try CLI.run(["truth", "import", csv, "--server", frontend, "--json"])
        #expect(importOnline.status == 0, "\(importOnline.standardError)")
        #expect(importOnline.jsonLines.first?["imported"] as? Int == 2)
        let imported = try bothWays(["compare", slowSong, "--json"])
        let importedReference = try #require(imported.jsonLines.first?["reference"] as? [String: Any])
        #expect(importedReference["bpm"] as? Double == 100 && importedReference["source"] as? String == "csv:tempi.csv")
        // All or nothing: a line naming no song of the library refuses the file, naming the line,
        // and the first line's tempo is not set.
        let partly = directory.file("partly.csv")
        try "song,bpm\n\(slowSong.prefix(12)),99\nffffffff,120\n".write(toFile: partly, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["truth", "import", partly, "--server", frontend])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("partly.csv:3: ") && refused.standardError.contains("nothing was imported"), "\(refused.standardError)")
        let unchanged = try bothWays(["compare", slowSong, "--json"])
        #expect((unchanged.jsonLines.first?["reference"] as? [String: Any])?["bpm"] as? Double == 100)

        // A server that does not answer: a clear error after the timeout and one retry.
        server.stop()
        let start = Date()
        let silent = try CLI.run(["query", "--bpm", "60..200", "--server", frontend, "--timeout", "0.5"])
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(silent.status == 1)
        #expect(silent.standardError.hasPrefix("Error: no answer from \(frontend)"))
    }
}
