import Foundation
import Testing
import TactusTestSupport
@testable import TactusStore

/// `tactus playlist --cadence-from`: the playlist follows a recording's cadence.
@Suite struct CadencePlaylistCommandTests {
    /// Songs of 3 minutes at 150, 85 (170 at double time), 160 and 180 BPM.
    func library(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.path("library.sqlite")
        let library = try Library(path: path)
        try library.record(
            [150.0, 85, 160, 180].enumerated().map { n, tempo in
                SongAnalyses(
                    song: Fixture.song(n, title: "At \(Int(tempo))"),
                    analyses: [Fixture.record("alpha", bpm: tempo, confidence: 1), Fixture.record("beta", bpm: tempo, confidence: 1)])
            })
        return path
    }

    /// 3 minutes at 150 steps/min, then 4 at 170.
    func recording(_ directory: TemporaryDirectory) throws -> String {
        var synth = StepRecordingSynth(stretches: [.init(seconds: 180, from: 150), .init(seconds: 240, from: 170)])
        synth.rate = 50
        synth.seed = 61
        let path = directory.path("run.csv")
        try Data(synth.render().csv(.plain).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func titles(_ run: TactusBinary.Outcome) throws -> [String] {
        try run.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return "\(object["title"] as? String ?? "?") for \(Int((object["cadence"] as? Double ?? 0).rounded()))"
        }
    }

    @Test func eachSteadyStretchIsASegmentWithOctaveMatches() throws {
        let directory = try TemporaryDirectory()
        let (library, recording) = (try library(directory), try recording(directory))
        let run = try TactusBinary.run(["playlist", "--db", library, "--cadence-from", recording, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try titles(run) == ["At 150 for 150", "At 85 for 170"])
        #expect(run.stderr.contains("cadence of \(recording): 3:0"))
        #expect(run.stderr.contains("warning: only 3:00 of music for the 4:0"))

        let sprint = try TactusBinary.run(["playlist", "--db", library, "--cadence-from", recording, "--sprint", "6", "--json"])
        #expect(sprint.status == 0, "\(sprint.stderr)")
        #expect(try titles(sprint) == ["At 160 for 159", "At 180 for 180"])

        let constant = try TactusBinary.run(["playlist", "--db", library, "--cadence", "170", "--sprint", "6", "--minutes", "3", "--json"])
        #expect(try titles(constant) == ["At 180 for 180"])
    }

    @Test func aRecordingWithoutStepsOrBadOptionsAreErrors() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let still = directory.path("still.csv")
        let lines = (0..<2000).map { String(format: "%.2f,0,0,1", Double($0) / 100) }
        try Data(("t,x,y,z\n" + lines.joined(separator: "\n")).utf8).write(to: URL(fileURLWithPath: still))
        let run = try TactusBinary.run(["playlist", "--db", library, "--cadence-from", still])
        #expect(run.status == 1)
        #expect(run.stderr.contains("\(still): no steps found"))
        let both = try TactusBinary.run(["playlist", "--db", library, "--cadence-from", still, "--cadence", "170"])
        #expect(both.status == 2)
        let sprint = try TactusBinary.run(["playlist", "--db", library, "--cadence", "170", "--sprint", "80"])
        #expect(sprint.status == 2)
        #expect(sprint.stderr.contains("--sprint must be a percentage in 0...50"))
    }
}
