import Foundation
import TactusModel
import Testing
@testable import TactusStore

/// The `tactus` binary built next to the tests (`swift build --build-tests` builds it).
enum TactusBinary {
    static let url: URL = {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/tactus")
    }()

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `tactus` with `arguments` and waits for it.
    static func run(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}

@Suite struct CommandLineTests {
    /// A library of songs at 120, 60, 240, 130 BPM (consensus of alpha and beta; gamma says 500).
    func library(_ directory: TemporaryDirectory) throws -> (Library, String) {
        let path = directory.path("library.sqlite")
        let library = try Library(path: path)
        try library.record(
            [120.0, 60, 240, 130].enumerated().map { n, tempo in
                SongAnalyses(
                    song: Fixture.song(n, title: "Title \(n)", artist: "Artist \(n)"),
                    analyses: [
                        Fixture.record("alpha", bpm: tempo, confidence: 1), Fixture.record("beta", bpm: tempo, confidence: 1),
                        Fixture.record("gamma", bpm: 500, confidence: 0.1),
                    ])
            })
        return (library, path)
    }

    func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test func queryPrintsJSONLinesAndTables() throws {
        let directory = try TemporaryDirectory()
        let (library, path) = try library(directory)
        let run = try TactusBinary.run(["query", "--db", path, "--bpm", "115..125", "--octave", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try jsonLines(run.stdout)
        let expected = try library.query(TempoQuery(range: 115...125, octave: true))
        #expect(lines.count == 3)
        #expect(lines.map { $0["song"] as? String } == expected.map(\.song.hex))
        #expect(lines.map { $0["factor"] as? Double } == [1, 0.5, 2])
        #expect(lines.map { $0["bpm"] as? Double } == [120, 60, 240])
        for (line, match) in zip(lines, expected) {
            #expect(line["detector"] as? String == "consensus")
            #expect(line["title"] as? String == match.title)
            #expect(line["artist"] as? String == match.artist)
            #expect(line["file"] as? String == match.file)
        }

        let detector = try TactusBinary.run(["query", "--db", path, "--bpm", "115..135", "--detector", "alpha", "--limit", "1"])
        #expect(detector.status == 0)
        #expect(detector.stdout.hasPrefix("SONG"))
        #expect(detector.stdout.contains(Fixture.songID(0).short))
        #expect(!detector.stdout.contains(Fixture.songID(3).short))
        #expect(detector.stdout.contains("1 song\n"))

        let agree = try TactusBinary.run(["query", "--db", path, "--bpm", "480..520", "--agree", "2", "--json"])
        #expect(agree.status == 0)
        #expect(agree.stdout.isEmpty)  // only gamma says 500
    }

    @Test func usageErrorsExitWith2AndFailuresWith1() throws {
        let directory = try TemporaryDirectory()
        let (_, path) = try library(directory)
        for arguments in [
            ["query", "--db", path, "--bpm", "fast"],
            ["query", "--db", path, "--bpm", "100..120", "--detector", "alpha", "--agree", "2"],
            ["query", "--db", path, "--server", "tcp://127.0.0.1:5555", "--bpm", "100..120"],  // without --db: the server
            ["playlist", "--db", path],
            ["truth", "--db", path, "set", "abcdef01"],
        ] {
            let run = try TactusBinary.run(arguments)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(!run.stderr.isEmpty)
        }
        let missing = try TactusBinary.run(["query", "--db", directory.path("none.sqlite"), "--bpm", "100..120"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no such file"))
        #expect(!FileManager.default.fileExists(atPath: directory.path("none.sqlite")))
        let outOfRange = try TactusBinary.run(["query", "--db", path, "--bpm", "100..1200"])
        #expect(outOfRange.status == 1)
        #expect(outOfRange.stderr.contains("1200"))
        let unknown = try TactusBinary.run(["compare", "--db", path, "0123456789abcdef"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no song in the library matches '0123456789abcdef'"))
    }

    @Test func truthSetAndImportThenCompare() throws {
        let directory = try TemporaryDirectory()
        let (library, path) = try library(directory)
        let set = try TactusBinary.run(["truth", "--db", path, "set", String(Fixture.songID(0).hex.prefix(10)), "121", "--json"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try jsonLines(set.stdout).first?["bpm"] as? Double == 121)
        #expect(try library.reference(for: Fixture.songID(0))?.bpm == 121)

        try Data("song,bpm\n\(Fixture.songID(1).hex),120\n\(Fixture.songID(2).hex),480\n".utf8)
            .write(to: directory.url.appendingPathComponent("truth.csv"))
        let imported = try TactusBinary.run(["truth", "--db", path, "import", directory.path("truth.csv")])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("imported 2 reference tempi"))

        try Data("song,bpm\n\(Fixture.songID(3).hex),130\n\(Fixture.songID(1).hex),fast\n".utf8)
            .write(to: directory.url.appendingPathComponent("bad.csv"))
        let bad = try TactusBinary.run(["truth", "--db", path, "import", directory.path("bad.csv")])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("bad.csv:3: bpm 'fast' is not a tempo in 1...1000"))
        #expect(try library.reference(for: Fixture.songID(3)) == nil)

        let song = try TactusBinary.run(["compare", "--db", path, Fixture.songID(1).hex, "--json"])
        #expect(song.status == 0, "\(song.stderr)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let comparison = try decoder.decode(SongComparison.self, from: Data(song.stdout.utf8))
        #expect(comparison == (try library.compare(Fixture.songID(1))).withDatesRounded)
        #expect(comparison.results.map(\.relation) == [.octave, .octave, .wrong])  // 60 vs 120; 500 vs 120

        let table = try TactusBinary.run(["compare", "--db", path])
        #expect(table.status == 0)
        #expect(table.stdout.contains("alpha / beta"))
        #expect(table.stdout.contains("ACC1"))
        let json = try TactusBinary.run(["compare", "--db", path, "--json"])
        let whole = try JSONDecoder().decode(LibraryComparison.self, from: Data(json.stdout.utf8))
        #expect(whole == (try library.compareLibrary()))
    }

    @Test func playlistFollowsTheCadence() throws {
        let directory = try TemporaryDirectory()
        let (_, path) = try library(directory)
        let run = try TactusBinary.run(["playlist", "--db", path, "--cadence", "120", "--minutes", "9", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try jsonLines(run.stdout)
        #expect(lines.map { $0["bpm"] as? Double } == [120, 60, 240])
        #expect(lines.map { $0["position"] as? Int } == [1, 2, 3])
        #expect(lines.map { $0["start_s"] as? Double } == [0, 180, 360])
        #expect(run.stderr.isEmpty)

        let short = try TactusBinary.run(["playlist", "--db", path, "--profile", "3m@130,10m@120"])
        #expect(short.status == 0)
        #expect(short.stderr.contains("warning: only 9:00 of music for the 10:00 at 120.00 steps per minute"))
        #expect(short.stdout.contains("4 songs, 12:00"))
        let bad = try TactusBinary.run(["playlist", "--db", path, "--profile", "3m@"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("invalid cadence profile '3m@'"))
    }
}

extension SongComparison {
    /// JSON carries dates to the second.
    var withDatesRounded: SongComparison {
        var copy = self
        copy.reference?.setAt = Date(timeIntervalSince1970: (reference!.setAt.timeIntervalSince1970).rounded(.down))
        return copy
    }
}
