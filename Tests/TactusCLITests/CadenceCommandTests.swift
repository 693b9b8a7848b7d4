import Foundation
import TactusTestSupport
import Testing

/// `tactus cadence`, run as a real process on recordings synthesised in the test.
@Suite struct CadenceCommandTests {
    static func recording(in directory: TemporaryDirectory, cadence: Double = 168, name: String = "run.csv") throws -> String {
        var synth = StepRecordingSynth(stretches: [.init(seconds: 40, from: cadence)])
        synth.seed = 31
        let path = directory.file(name)
        try Data(synth.render().csv(.phyphox).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func jsonLinesDescribeEachRecordingAndItsWindows() throws {
        let directory = try TemporaryDirectory()
        let run = try Self.recording(in: directory)
        let result = try CLI.run(["cadence", "--json", run])
        #expect(result.status == 0, "\(result.standardError)")
        let line = try #require(result.jsonLines.first)
        #expect(Set(line.keys) == [
            "file", "format", "unit", "unit_evidence", "includes_gravity", "samples", "duration_s", "sample_rate_hz",
            "cadence_spm", "step_s", "windows",
        ])
        #expect(line["format"] as? String == "phyphox")
        #expect(line["unit_evidence"] as? String == "header")
        #expect(abs((line["cadence_spm"] as? Double ?? 0) - 168) < 1.5)
        let windows = try #require(line["windows"] as? [[String: Any]])
        #expect(windows.count == 16)
        #expect(Set(windows[0].keys) == ["start_s", "end_s", "status", "cadence_spm", "confidence", "movement_g"])
        #expect(windows.allSatisfy { $0["status"] as? String == "steps" })
    }

    @Test func theTableSaysTheCadenceAndThePlotIsWritten() throws {
        let directory = try TemporaryDirectory()
        let run = try Self.recording(in: directory, cadence: 150)
        let plot = directory.file("run.svg")
        let result = try CLI.run(["cadence", run, "--windows", "--plot", plot])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("phyphox, 100.0 Hz"))
        let summary = try #require(result.standardOutput.split(separator: "\n").first { $0.contains("cadence 1") })
        #expect(summary.contains("16 windows: 16 with steps, 0 still, 0 without steps"))
        #expect(result.standardOutput.contains("0-10 s   steps"))
        let svg = try String(contentsOfFile: plot, encoding: .utf8)
        #expect(svg.contains("Cadence of run.csv"))
    }

    @Test func aBadRecordingIsAnErrorNamingItAndTheOthersAreStillAnalysed() throws {
        let directory = try TemporaryDirectory()
        let run = try Self.recording(in: directory)
        let bad = directory.file("notes.csv")
        try Data("t,x,y,z\n0,0,0,1\n0.01,nan,0,1\n".utf8).write(to: URL(fileURLWithPath: bad))
        let result = try CLI.run(["cadence", bad, run])
        #expect(result.status == 1)
        #expect(result.standardError.contains("\(bad): line 3: column 'x' is not a finite number: 'nan'"))
        #expect(result.standardOutput.contains(run))
        let json = try CLI.run(["cadence", "--json", bad])
        let error = try #require(json.jsonLines.first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "not-a-number")
    }

    @Test func plotTakesOneRecording() throws {
        let result = try CLI.run(["cadence", "a.csv", "b.csv", "--plot", "x.svg"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("--plot draws one recording"))
    }
}
