import Foundation
import TactusTestSupport
import Testing

/// `tactus beats`: a file analysed here, and a song of a library file (its stored grid), with a
/// click track; the song synthesised at a known tempo and written through libsndfile.
@Suite struct BeatsCommandTests {
    static let bpm = 126.0

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
        let replaced = try CLI.run(["beats", "drums.wav", "--db", database, "--click", click, "--force"])
        #expect(replaced.status == 0, "\(replaced.standardError)")

        // A song the library does not hold is named in the error.
        let unknown = try CLI.run(["beats", "no-such-song.wav", "--db", database])
        #expect(unknown.status != 0 && unknown.standardError.contains("no-such-song.wav"), "\(unknown.standardError)")
    }
}
