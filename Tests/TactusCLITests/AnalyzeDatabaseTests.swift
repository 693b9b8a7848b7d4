import Foundation
import TactusTestSupport
import Testing

/// `tactus analyze --db`: what it analyses lands in the library file, where `query` finds it.
@Suite struct AnalyzeDatabaseTests {
    @Test func analysedSongsAreStoredAndQueryableByTempo() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-analyze-db")
        let slow = directory.file("slow.flac"), fast = directory.file("fast.wav"), broken = directory.file("broken.mp3")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 100, seconds: 12, sampleRate: 22_050)], sampleRate: 22_050, to: slow)
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 140, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: fast)
        #expect(FileManager.default.createFile(atPath: broken, contents: Data(repeating: 7, count: 5_000)))
        let database = directory.file("library.sqlite")

        // A file that cannot be decoded is reported, not stored, and does not stop the others.
        let analysed = try CLI.run(["analyze", slow, broken, fast, "--db", database, "--json"])
        #expect(analysed.status == 1)
        let lines = analysed.jsonLines
        #expect(lines.map { $0["file"] as? String } == [slow, broken, fast])
        let slowSong = try #require(lines[0]["song"] as? String), fastSong = try #require(lines[2]["song"] as? String)

        let table = try CLI.run(["analyze", slow, "--db", database])
        #expect(table.status == 0, "\(table.standardError)")
        #expect(table.standardOutput.hasSuffix("\n  stored in \(database)\n"))

        let slowMatches = try CLI.run(["query", "--db", database, "--bpm", "95..105", "--json"])
        #expect(slowMatches.status == 0, "\(slowMatches.standardError)")
        let slowLines = slowMatches.jsonLines
        #expect(slowLines.map { $0["song"] as? String } == [slowSong])
        let match = try #require(slowLines.first)
        #expect(match["file"] as? String == "slow.flac")
        #expect(abs((match["bpm"] as? Double ?? 0) - 100) < 2)
        #expect(abs((match["duration_s"] as? Double ?? 0) - 12) < 0.01)

        let fastMatches = try CLI.run(["query", "--db", database, "--bpm", "135..145", "--json"])
        #expect(fastMatches.jsonLines.map { $0["song"] as? String } == [fastSong])
        #expect(fastMatches.jsonLines.first?["file"] as? String == "fast.wav")

        // Only the two songs are in the library, each analysed by every detector once: the
        // second analysis of slow.flac replaced the first.
        let everything = try CLI.run(["query", "--db", database, "--bpm", "1..1000", "--json"])
        #expect(Set(everything.jsonLines.compactMap { $0["song"] as? String }) == [slowSong, fastSong])
        let comparison = try CLI.run(["compare", "--db", database, slow, "--json"])
        #expect(comparison.status == 0, "\(comparison.standardError)")
        let compared = try #require(comparison.jsonLines.first)
        let results = try #require(compared["results"] as? [[String: Any]])
        let detectors = try #require(lines[0]["analyses"] as? [[String: Any]]).compactMap { $0["detector"] as? String }
        #expect(results.compactMap { $0["detector"] as? String }.sorted() == detectors.sorted())
        #expect(results.allSatisfy { $0["status"] as? String == "done" })
    }

    @Test func anUnwritableLibraryFailsBeforeAnalysing() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-analyze-db")
        let song = directory.file("song.wav")
        try AudioFileWriter(.wav16).write([Synth.clickTrack(bpm: 120, seconds: 6, sampleRate: 22_050)], sampleRate: 22_050, to: song)
        let run = try CLI.run(["analyze", song, "--db", directory.file("missing/dir/library.sqlite")])
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.hasPrefix("Error: "))
    }
}
