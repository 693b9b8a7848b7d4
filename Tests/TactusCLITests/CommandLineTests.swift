import Foundation
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct CommandLineTests {
    /// A library of songs at 120, 60, 240, 130 BPM (consensus of alpha and beta; gamma says 500).
    func library(_ directory: TemporaryDirectory) throws -> (Library, String) {
        let path = directory.file("library.sqlite")
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
        let run = try CLI.run(["query", "--db", path, "--bpm", "115..125", "--octave", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = try jsonLines(run.standardOutput)
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

        let detector = try CLI.run(["query", "--db", path, "--bpm", "115..135", "--detector", "alpha", "--limit", "1"])
        #expect(detector.status == 0)
        #expect(detector.standardOutput.hasPrefix("SONG"))
        #expect(detector.standardOutput.contains(Fixture.songID(0).short))
        #expect(!detector.standardOutput.contains(Fixture.songID(3).short))
        #expect(detector.standardOutput.contains("1 song\n"))

        let agree = try CLI.run(["query", "--db", path, "--bpm", "480..520", "--agree", "2", "--json"])
        #expect(agree.status == 0)
        #expect(agree.standardOutput.isEmpty)  // only gamma says 500
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
            let run = try CLI.run(arguments)
            #expect(run.status == 2, "\(arguments): \(run.standardError)")
            #expect(!run.standardError.isEmpty)
        }
        let missing = try CLI.run(["query", "--db", directory.file("none.sqlite"), "--bpm", "100..120"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("no such file"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("none.sqlite")))
        let outOfRange = try CLI.run(["query", "--db", path, "--bpm", "100..1200"])
        #expect(outOfRange.status == 1)
        #expect(outOfRange.standardError.contains("1200"))
        let unknown = try CLI.run(["compare", "--db", path, "0123456789abcdef"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no song in the library matches '0123456789abcdef'"))
    }

    /// Tempi and cadences are plain decimal numbers: `0x64..0x82` (100..130 to Swift's
    /// `Double`), exponents and hexadecimal cadences are refused, naming what was given.
    @Test func tempoRangesAndProfilesArePlainDecimals() throws {
        let directory = try TemporaryDirectory()
        let (_, path) = try library(directory)
        for range in ["0x64..0x82", "1e2..1.3e2", "0x1.9p6..130", "100..0x82"] {
            let run = try CLI.run(["query", "--db", path, "--bpm", range])
            #expect(run.status == 2, "\(range): \(run.standardOutput)")
            #expect(run.standardError.contains(range), "\(run.standardError)")
        }
        let plain = try CLI.run(["query", "--db", path, "--bpm", "100..130.5"])
        #expect(plain.status == 0 && plain.standardOutput.contains("2 songs"), "\(plain.standardOutput) \(plain.standardError)")
        let profile = try CLI.run(["playlist", "--db", path, "--profile", "10m@0x78"])
        #expect(profile.status != 0 && profile.standardError.contains("'0x78' is not a cadence"), "\(profile.standardError)")
    }

    /// Every command's help reads as it was written: no line ends in a backslash left over from
    /// a line continuation written twice (`tags write --help` had twenty).
    @Test func noHelpTextHasAStrayBackslash() throws {
        var commands: [[String]] = [[]], checked: [String] = []
        while let command = commands.popLast() {
            let help = try CLI.run(command + ["--help"])
            #expect(help.status == 0, "\(command): \(help.standardError)")
            let lines = help.standardOutput.split(separator: "\n")
            #expect(!lines.contains { $0.hasSuffix("\\") }, "tactus \(command.joined(separator: " ")) --help: \(help.standardOutput)")
            checked.append(command.joined(separator: " "))
            // Subcommands are listed as "  NAME   what it does".
            for line in lines.drop(while: { $0 != "SUBCOMMANDS:" }).dropFirst() where line.hasPrefix("  ") {
                guard let name = line.dropFirst(2).split(separator: " ").first, line.dropFirst(2).first != " ",
                    name.allSatisfy({ $0.isLowercase || $0 == "-" })
                else { continue }
                commands.append(command + [String(name)])
            }
        }
        #expect(checked.contains("tags write") && checked.contains("tags read") && checked.count > 25, "\(checked)")
    }

    /// A CSV of more tempi than a server takes at once is refused before any request, saying
    /// what to do (it is imported all or nothing, in one request).
    @Test func aTruthImportTooLargeForAServerSaysWhatToDo() throws {
        let directory = try TemporaryDirectory()
        let rows = (0...5_000).map { "\(String(format: "%064x", $0)),120" }
        try Data(("song,bpm\n" + rows.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: directory.file("big.csv")))
        let refused = try CLI.run(["truth", "import", directory.file("big.csv"), "--server", "tcp://127.0.0.1:1", "--timeout", "1"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("5001 reference tempi; a server imports at most 5000 at once"), "\(refused.standardError)")
    }

    @Test func truthSetAndImportThenCompare() throws {
        let directory = try TemporaryDirectory()
        let (library, path) = try library(directory)
        let set = try CLI.run(["truth", "--db", path, "set", String(Fixture.songID(0).hex.prefix(10)), "121", "--json"])
        #expect(set.status == 0, "\(set.standardError)")
        #expect(try jsonLines(set.standardOutput).first?["bpm"] as? Double == 121)
        #expect(try library.reference(for: Fixture.songID(0))?.bpm == 121)

        try Data("song,bpm\n\(Fixture.songID(1).hex),120\n\(Fixture.songID(2).hex),480\n".utf8)
            .write(to: URL(fileURLWithPath: directory.file("truth.csv")))
        let imported = try CLI.run(["truth", "--db", path, "import", directory.file("truth.csv")])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(imported.standardOutput.contains("imported 2 reference tempi"))

        try Data("song,bpm\n\(Fixture.songID(3).hex),130\n\(Fixture.songID(1).hex),fast\n".utf8)
            .write(to: URL(fileURLWithPath: directory.file("bad.csv")))
        let bad = try CLI.run(["truth", "--db", path, "import", directory.file("bad.csv")])
        #expect(bad.status == 1)
        #expect(bad.standardError.contains("bad.csv:3: bpm 'fast' is not a tempo in 1...1000"))
        #expect(try library.reference(for: Fixture.songID(3)) == nil)

        let song = try CLI.run(["compare", "--db", path, Fixture.songID(1).hex, "--json"])
        #expect(song.status == 0, "\(song.standardError)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let comparison = try decoder.decode(SongComparison.self, from: Data(song.standardOutput.utf8))
        #expect(comparison == (try library.compare(Fixture.songID(1))).withDatesRounded)
        #expect(comparison.results.map(\.relation) == [.octave, .octave, .wrong])  // 60 vs 120; 500 vs 120

        let table = try CLI.run(["compare", "--db", path])
        #expect(table.status == 0)
        #expect(table.standardOutput.contains("alpha / beta"))
        #expect(table.standardOutput.contains("ACC1"))
        let json = try CLI.run(["compare", "--db", path, "--json"])
        let whole = try JSONDecoder().decode(LibraryComparison.self, from: Data(json.standardOutput.utf8))
        #expect(whole == (try library.compareLibrary()))
    }

    @Test func playlistFollowsTheCadence() throws {
        let directory = try TemporaryDirectory()
        let (_, path) = try library(directory)
        let run = try CLI.run(["playlist", "--db", path, "--cadence", "120", "--minutes", "9", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = try jsonLines(run.standardOutput)
        #expect(lines.map { $0["bpm"] as? Double } == [120, 60, 240])
        #expect(lines.map { $0["position"] as? Int } == [1, 2, 3])
        #expect(lines.map { $0["start_s"] as? Double } == [0, 180, 360])
        #expect(run.standardError.isEmpty)

        let short = try CLI.run(["playlist", "--db", path, "--profile", "3m@130,10m@120"])
        #expect(short.status == 0)
        #expect(short.standardError.contains("warning: only 9:00 of music for the 10:00 at 120.00 steps per minute"))
        #expect(short.standardOutput.contains("4 songs, 12:00"))
        let bad = try CLI.run(["playlist", "--db", path, "--profile", "3m@"])
        #expect(bad.status == 1)
        #expect(bad.standardError.contains("invalid cadence profile '3m@'"))
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
