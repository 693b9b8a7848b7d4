import Foundation
import TactusAudio
import TactusModel
import TactusTestSupport
import Testing

/// `tactus probe`, run as a real process on files written in the test.
@Suite struct ProbeCommandTests {
    static let fields: Set<String> = [
        "file", "song", "format", "codec", "sample_rate", "channels", "duration_s", "title", "artist",
        "album", "decode_seconds", "warnings", "error",
    ]

    @Test func jsonLinesDescribeEachFile() throws {
        let directory = try TemporaryDirectory()
        let signal = Synth.drumPattern(bpm: 100, seconds: 6, sampleRate: 44100)
        let tags = AudioTags(title: "Drums", artist: "Synth", album: "Tests")
        let mp3 = directory.file("drums.mp3"), flac = directory.file("Ünïcödé 東京.flac")
        try AudioFileWriter(.mp3(.variable), tags: tags).write([signal, signal], sampleRate: 44100, to: mp3)
        try AudioFileWriter(.flac, tags: tags).write([Synth.drumPattern(bpm: 100, seconds: 6, sampleRate: 48000)], sampleRate: 48000, to: flac)

        let result = try CLI.run(["probe", "--json", mp3, flac])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.jsonLines
        try #require(lines.count == 2)
        for line in lines {
            #expect(Set(line.keys) == Self.fields)
            #expect(line["title"] as? String == "Drums")
            #expect(line["artist"] as? String == "Synth")
            #expect(line["album"] as? String == "Tests")
            #expect((line["warnings"] as? [Any])?.isEmpty == true)
            #expect(line["error"] is NSNull)
            #expect((line["decode_seconds"] as? Double ?? -1) >= 0)
        }
        #expect(lines[0]["file"] as? String == mp3)
        #expect(lines[0]["format"] as? String == "mpeg")
        #expect(lines[0]["codec"] as? String == "mp3")
        #expect(lines[0]["channels"] as? Int == 2)
        #expect(abs((lines[0]["duration_s"] as? Double ?? 0) - 6) < 1152.0 / 44100)
        #expect(lines[0]["song"] as? String == (try SongID(of: .file(mp3)).hex))
        #expect(lines[1]["file"] as? String == flac)
        #expect(lines[1]["format"] as? String == "flac")
        #expect(lines[1]["sample_rate"] as? Int == 48000)
        #expect(lines[1]["channels"] as? Int == 1)
        #expect(lines[1]["duration_s"] as? Double == 6)
        #expect(lines[1]["song"] as? String == (try SongID(of: .file(flac)).hex))
    }

    @Test func anyFailureExitsOneAndIsReported() throws {
        let directory = try TemporaryDirectory()
        let good = directory.file("good.wav"), bad = directory.file("bad.mp3"), missing = directory.file("missing.ogg")
        try AudioFileWriter(.wav16).write([Synth.clickTrack(bpm: 90, seconds: 6, sampleRate: 22050)], sampleRate: 22050, to: good)
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: bad))
        let result = try CLI.run(["probe", "--json", good, bad, missing])
        #expect(result.status == 1)
        let lines = result.jsonLines
        try #require(lines.count == 3)
        #expect(lines[0]["error"] is NSNull)
        let badError = try #require(lines[1]["error"] as? [String: Any])
        #expect(badError["code"] as? String == "unsupported-format")
        #expect((badError["message"] as? String)?.contains("bad.mp3") == true)
        #expect(lines[1]["song"] as? String == (try SongID(of: .file(bad)).hex))
        #expect(lines[1]["duration_s"] is NSNull)
        let missingError = try #require(lines[2]["error"] as? [String: Any])
        #expect(missingError["code"] as? String == "unreadable")
        #expect(lines[2]["song"] is NSNull)
        for line in lines { #expect(Set(line.keys) == Self.fields) }
    }

    /// One MPEG frame's header and junk (what a hostile folder held by the thousand) is not
    /// audio, said once in the output: nothing of libsndfile's libmpg123 on standard error (it
    /// printed "a one-frame stream? Duh..." for each: attack round 8, L5).
    @Test func oneFrameOfJunkIsRefusedWithoutTheDecodersNoise() throws {
        let directory = try TemporaryDirectory()
        let junk = directory.file("song.mp3")
        #expect(FileManager.default.createFile(atPath: junk, contents: Data([0xFF, 0xFB, 0x90, 0x00] + Array(String(repeating: "junk", count: 8).utf8))))
        let result = try CLI.run(["probe", "--json", junk])
        #expect(result.status == 1)
        let error = try #require(result.jsonLines.first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "unsupported-format" && (error["message"] as? String ?? "").contains("FF FB 90 00"), "\(error)")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }

    @Test func truncationIsAWarningNotAFailure() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("cut.flac")
        let bytes = try AudioFileWriter(.flac).encode([Synth.drumPattern(bpm: 128, seconds: 12, sampleRate: 44100)], sampleRate: 44100)
        try Data(bytes.prefix(bytes.count * 3 / 4)).write(to: URL(fileURLWithPath: path))
        let result = try CLI.run(["probe", "--json", path])
        #expect(result.status == 0)
        let line = try #require(result.jsonLines.first)
        let warnings = try #require(line["warnings"] as? [[String: Any]])
        #expect(warnings.count == 1)
        #expect(warnings.first?["code"] as? String == "truncated")
        let duration = try #require(line["duration_s"] as? Double)
        #expect(duration > 5 && duration < 12)
    }

    @Test func textOutputNamesEverything() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("café.wav")
        try AudioFileWriter(.wav24, tags: AudioTags(title: "Tëst", year: 1999)).write(
            [Synth.sine(hz: 440, seconds: 5.5, sampleRate: 32000)], sampleRate: 32000, to: path)
        let result = try CLI.run(["probe", path])
        #expect(result.status == 0)
        let output = result.standardOutput
        #expect(output.contains(path))
        #expect(output.contains("wav (pcm-s24), 32000 Hz, 1 channel, 5.500 s"))
        #expect(output.contains("Tëst"))
        #expect(output.contains("1999"))
        #expect(output.contains(try SongID(of: .file(path)).hex))
        #expect(output.contains("decoded"))
    }

    @Test func limitsAreOptions() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("short.wav")
        try AudioFileWriter(.wav16).write([Synth.sine(hz: 440, seconds: 3, sampleRate: 8000)], sampleRate: 8000, to: path)
        let tooShort = try CLI.run(["probe", "--json", path])
        #expect(tooShort.status == 1)
        #expect((tooShort.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "too-short")
        let tooLong = try CLI.run(["probe", "--json", "--min-seconds", "1", "--max-seconds", "2", path])
        #expect((tooLong.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "too-long")
        #expect(try CLI.run(["probe", "--min-seconds", "1", path]).status == 0)
    }

    @Test(arguments: [["probe"], ["probe", "--bogus", "x.mp3"], ["probe", "--max-seconds", "-1", "x.mp3"], ["no-such-command"]])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains("Usage") || result.standardError.contains("Error"))
    }

    @Test func helpDescribesProbe() throws {
        let help = try CLI.run(["help", "probe"])
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("--json"))
        #expect(help.standardOutput.contains("decode_seconds"))
        let root = try CLI.run(["--help"])
        #expect(root.status == 0)
        #expect(root.standardOutput.contains("probe"))
    }

    /// OpenBLAS (for `beatnet` only) is not among the executable's libraries: loaded with the
    /// program, its idle threads cost every command, `probe` included, about 0.1 s of CPU.
    @Test func theExecutableDoesNotLoadOpenBLASAtStart() throws {
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [CLI.binary]
        let output = Pipe()
        ldd.standardOutput = output
        try ldd.run()
        let libraries = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        #expect(ldd.terminationStatus == 0)
        #expect(libraries.contains("libmpg123"), "\(libraries)")
        #expect(!libraries.contains("openblas"), "\(libraries)")
    }
}
