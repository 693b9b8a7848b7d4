import Foundation
import TactusTestSupport
import Testing

/// `tactus playlist --cadence-from`: the playlist follows a recording's cadence.
@Suite struct CadencePlaylistCommandTests {
    /// A library of songs at 150, 85 (170 at double time), 160 and 180 BPM, analysed by `tactus analyze`.
    static func library(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.file("library.sqlite")
        var files: [String] = []
        for tempo in [150.0, 85, 160, 180] {
            let file = directory.file("at-\(Int(tempo)).flac")
            try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: tempo, seconds: 30, sampleRate: 22_050)], sampleRate: 22_050, to: file)
            files.append(file)
        }
        let analysed = try CLI.run(["analyze"] + files + ["--db", path])
        try #require(analysed.status == 0, "\(analysed.standardError)")
        return path
    }

    /// 3 minutes at 150 steps/min, then 4 at 170.
    static func recording(_ directory: TemporaryDirectory) throws -> String {
        var synth = StepRecordingSynth(stretches: [.init(seconds: 180, from: 150), .init(seconds: 240, from: 170)])
        synth.rate = 50
        synth.seed = 61
        let path = directory.file("run.csv")
        try Data(synth.render().csv(.plain).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Each song chosen and the cadence it serves.
    static func chosen(_ run: CLI.Result) -> [String] {
        run.jsonLines.map { "\($0["file"] as? String ?? "?") for \(Int(($0["cadence"] as? Double ?? 0).rounded()))" }
    }

    @Test func eachSteadyStretchIsASegmentWithOctaveMatches() throws {
        let directory = try TemporaryDirectory()
        let (library, recording) = (try Self.library(directory), try Self.recording(directory))
        // --strict: only songs within the tolerance of each segment's cadence.
        let run = try CLI.run(["playlist", "--db", library, "--cadence-from", recording, "--strict", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(Self.chosen(run) == ["at-150.flac for 150", "at-85.flac for 170"])
        #expect(run.standardError.contains("cadence of \(recording): 3:0"))

        let sprint = try CLI.run(["playlist", "--db", library, "--cadence-from", recording, "--sprint", "6", "--strict", "--json"])
        #expect(sprint.status == 0, "\(sprint.standardError)")
        #expect(Self.chosen(sprint) == ["at-160.flac for 159", "at-180.flac for 180"])

        let constant = try CLI.run(
            ["playlist", "--db", library, "--cadence", "170", "--sprint", "6", "--minutes", "0.5", "--strict", "--json"])
        #expect(Self.chosen(constant) == ["at-180.flac for 180"])

        // Without --strict a segment whose songs run out is filled from the nearest others, flagged
        // and named in a warning; a song that fits a later segment is kept for it.
        let filled = try CLI.run(["playlist", "--db", library, "--cadence-from", recording, "--json"])
        #expect(filled.status == 0, "\(filled.standardError)")
        let chosen = Self.chosen(filled)
        #expect(chosen.first == "at-150.flac for 150" && chosen.contains("at-85.flac for 170"), "\(chosen)")
        #expect(filled.jsonLines.filter { $0["fits"] as? Bool == false }.allSatisfy { abs($0["off_pct"] as? Double ?? 0) > 4 })
        #expect(filled.jsonLines.contains { $0["fits"] as? Bool == false } == filled.standardError.contains("beyond the tolerance"))
    }

    @Test func aRecordingWithoutStepsOrBadOptionsAreErrors() throws {
        let directory = try TemporaryDirectory()
        let library = directory.file("empty.sqlite")
        let still = directory.file("still.csv")
        let lines = (0..<2000).map { String(format: "%.2f,0,0,1", Double($0) / 100) }
        try Data(("t,x,y,z\n" + lines.joined(separator: "\n")).utf8).write(to: URL(fileURLWithPath: still))
        let run = try CLI.run(["playlist", "--db", library, "--cadence-from", still])
        #expect(run.status == 1)
        #expect(run.standardError.contains("\(still): no steps found"))
        let both = try CLI.run(["playlist", "--db", library, "--cadence-from", still, "--cadence", "170"])
        #expect(both.status == 2)
        let sprint = try CLI.run(["playlist", "--db", library, "--cadence", "170", "--sprint", "80"])
        #expect(sprint.status == 2)
        #expect(sprint.standardError.contains("--sprint must be a percentage in 0...50"))
    }
}
