import Foundation
import TactusTestSupport
import Testing

/// `tactus beats`: a file analysed here, and a song of a library file (its stored grid), with a
/// click track; the song synthesised at a known tempo and written through libsndfile.
@Suite struct BeatsCommandTests {
    static let bpm = 126.0

    @Test func aFileThatCannotBeDecodedIsNamedOnce() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-beats-bad")
        let empty = directory.file("empty.wav"), missing = directory.file("missing.wav")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        for path in [empty, missing] {
            let run = try CLI.run(["beats", path])
            #expect(run.status != 0)
            #expect(run.standardError.components(separatedBy: path).count == 2, "named once: \(run.standardError)")
        }
    }

    /// With --json a failure is one JSON object on standard output, with its code, as
    /// `cadence --json` prints it: a file that cannot be read, and one with no beat (silence).
    @Test func withJSONAFailureIsJSONWithItsCode() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-beats-json")
        let missing = directory.file("missing.wav"), silent = directory.file("silent.wav")
        try AudioFileWriter(.wav16).write([[Float](repeating: 0, count: 44100 * 10)], sampleRate: 44100, to: silent)
        for (path, code) in [(missing, "unreadable"), (silent, "no-tempo")] {
            let run = try CLI.run(["beats", "--json", path])
            #expect(run.status == 1)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "not JSON: \(run.standardOutput)")
            #expect(object["file"] as? String == path)
            let error = try #require(object["error"] as? [String: Any])
            #expect(error["code"] as? String == code)
            #expect((error["message"] as? String)?.contains(path) == true)
        }
    }

    @Test func aFilesGridAndAStoredSongsGridAreTheSameAndClickOnTheBeats() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-beats")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let song = music + "/drums.wav"
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(bpm: Self.bpm, seconds: 40, sampleRate: 22_050, pattern: .backbeat)], sampleRate: 22_050, to: song)

        // Here: the constant grid (--grid: beatnet is not asked).
        let here = try CLI.run(["beats", song, "--grid", "--json"])
        #expect(here.status == 0, "\(here.standardError)")
        let local = try #require(here.jsonLines.first)
        #expect(local["source"] as? String == "constant-grid")
        let beats = try #require(local["beats"] as? [Double])
        let grid = try #require(local["bpm"] as? Double)
        #expect(abs(grid / Self.bpm - 1) < 0.0005, "grid at \(grid) BPM")
        // The drums' beats fall every 60 / 126 s from 0: each grid beat within 15 ms of one.
        let period = 60 / Self.bpm
        #expect(beats.allSatisfy { beat in
            let offset = beat.truncatingRemainder(dividingBy: period)
            return min(offset, period - offset) < 0.015
        }, "\(beats.prefix(4))")

        // Stored: a scanned library keeps the same grid, and `beats SONG --db` prints it.
        let database = directory.file("lib.sqlite")
        let scanned = try CLI.run(["scan", "--db", database, "--library-root", music])
        #expect(scanned.status == 0, "\(scanned.standardError)")
        let click = directory.file("click.wav")
        let stored = try CLI.run(["beats", "drums.wav", "--db", database, "--json", "--click", click])
        #expect(stored.status == 0, "\(stored.standardError)")
        let library = try #require(stored.jsonLines.first)
        #expect(library["source"] as? String == "constant-grid")
        let storedBeats = try #require(library["beats"] as? [Double])
        #expect(storedBeats.count == beats.count && zip(storedBeats, beats).allSatisfy { abs($0 - $1) < 0.001 })
        #expect(FileManager.default.fileExists(atPath: click))
        // An existing click track is refused with the flag that replaces it, which beats takes.
        let refused = try CLI.run(["beats", "drums.wav", "--db", database, "--click", click])
        #expect(refused.status != 0 && refused.standardError.contains("give --force to replace it"), "\(refused.standardError)")
        #expect(refused.standardError.components(separatedBy: click).count == 2, "the path once: \(refused.standardError)")
        let replaced = try CLI.run(["beats", "drums.wav", "--db", database, "--click", click, "--force"])
        #expect(replaced.status == 0, "\(replaced.standardError)")

        // A song the library does not hold is named in the error.
        let unknown = try CLI.run(["beats", "no-such-song.wav", "--db", database])
        #expect(unknown.status != 0 && unknown.standardError.contains("no-such-song.wav"), "\(unknown.standardError)")
    }

    /// Without --grid or --tracked, a steady song gets the grid (the more exact there) and a
    /// song whose tempo steps gets beatnet's tracked beats, which follow the step; --tracked
    /// asks for beatnet's on the steady song too, and the two flags together are refused.
    @Test func aSteadySongGetsTheGridAndASongThatChangesTempoGetsTrackedBeats() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-beats-choice")
        let steady = directory.file("steady.wav"), stepping = directory.file("stepping.wav")
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(bpm: Self.bpm, seconds: 40, sampleRate: 22_050, pattern: .backbeat)], sampleRate: 22_050, to: steady)
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(seconds: 60, sampleRate: 22_050, pattern: .backbeat) { $0 < 30 ? 100 : 130 }],
            sampleRate: 22_050, to: stepping)

        let chosen = try CLI.run(["beats", steady, "--json"])
        #expect(chosen.status == 0, "\(chosen.standardError)")
        #expect(chosen.jsonLines.first?["source"] as? String == "constant-grid")
        let forced = try CLI.run(["beats", steady, "--tracked", "--json"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(forced.jsonLines.first?["source"] as? String == "beatnet")

        let changing = try CLI.run(["beats", stepping, "--json"])
        #expect(changing.status == 0, "\(changing.standardError)")
        let report = try #require(changing.jsonLines.first)
        #expect(report["source"] as? String == "beatnet")
        // The tracked beats follow the step: their spacing before 25 s and after 35 s is that
        // of 100 and 130 BPM (or an octave of it).
        let beats = try #require(report["beats"] as? [Double])
        func spacing(_ range: ClosedRange<Double>) -> Double {
            let inside = beats.filter { range.contains($0) }
            let gaps = zip(inside.dropFirst(), inside).map { $0 - $1 }.sorted()
            return gaps.isEmpty ? 0 : gaps[gaps.count / 2]
        }
        let before = spacing(5...25), after = spacing(35...58)
        #expect(before > 0 && after > 0 && abs((before / after) / (130.0 / 100) - 1) < 0.03, "spacing \(before) s then \(after) s")

        let both = try CLI.run(["beats", steady, "--grid", "--tracked"])
        #expect(both.status == 2 && both.standardError.contains("--tracked"), "\(both.standardError)")
    }
}
