import ArgumentParser
import Foundation
import TactusCadence
import TactusModel
import TactusTestSupport

/// `tactus-bench cadence`: how long the cadence of a long accelerometer recording takes.
struct CadenceBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cadence",
        abstract: "Cadence analysis time of a 30-minute accelerometer recording at 100 Hz (target: under 0.2 s).",
        discussion: """
            Synthesises a run (cadence ramps between 150 and 185 steps/min, arm swing, noise, a random \
            orientation), writes it as a `t,x,y,z` CSV into a temporary directory, and times, best of \
            --runs: the analysis of the recording in memory (resampling, windows, autocorrelations), \
            and the whole of `tactus cadence` on the file (reading and parsing the CSV too). Also \
            prints the share of windows within 2 steps/min of the synthesised steps and the overall error.
            """)

    @Option(help: "Length of the recording in minutes.")
    var minutes: Double = 30

    @Option(help: "Samples per second.")
    var rate: Double = 100

    @Option(help: "Runs; the best is reported.")
    var runs = 5

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard minutes >= 0.5, minutes <= 600 else { throw ValidationError("--minutes must be between 0.5 and 600.") }
        guard rate >= 25, rate <= 500 else { throw ValidationError("--rate must be between 25 and 500.") }
        guard runs >= 1, runs <= 100 else { throw ValidationError("--runs must be between 1 and 100.") }
    }

    struct Result: Encodable {
        var recording_s: Double
        var rate_hz: Double
        var csv_bytes: Int
        var windows: Int
        var best_analysis_s: Double
        var best_file_s: Double
        var windows_within_2_spm: Double
        var overall_error_spm: Double
    }

    func run() throws {
        let seconds = minutes * 60
        let quarter = seconds / 4
        var synth = StepRecordingSynth(stretches: [
            .init(seconds: quarter, from: 150, to: 185), .init(seconds: quarter, from: 185),
            .init(seconds: quarter, from: 185, to: 160), .init(seconds: quarter, from: 160),
        ])
        synth.rate = rate
        let recording = synth.render()
        let directory = try TemporaryDirectory(prefix: "tactus-bench-cadence")
        let path = directory.path + "/run.csv"
        let csv = Data(recording.csv(.plain).utf8)
        try csv.write(to: URL(fileURLWithPath: path))
        let inMemory = AccelerometerRecording(
            format: .plain, times: recording.times, x: recording.x, y: recording.y, z: recording.z, declaredUnit: nil)
        let analyzer = CadenceAnalyzer()
        var bestAnalysis = Double.infinity, bestFile = Double.infinity
        var report: CadenceReport?
        for _ in 0..<runs {
            let start = Date()
            report = try analyzer.analyze(inMemory, file: "run")
            bestAnalysis = min(bestAnalysis, Date().timeIntervalSince(start))
            let fileStart = Date()
            _ = try analyzer.analyze(path: path)
            bestFile = min(bestFile, Date().timeIntervalSince(fileStart))
        }
        guard let report else { return }
        var judged = 0, close = 0
        var truths: [Double] = []
        for window in report.windows {
            guard let truth = recording.cadence(from: window.start, to: window.end) else { continue }
            judged += 1
            truths.append(truth)
            if let cadence = window.cadence, abs(cadence - truth) <= 2 { close += 1 }
        }
        let truth = truths.reduce(0, +) / Double(max(truths.count, 1))
        let result = Result(
            recording_s: seconds, rate_hz: rate, csv_bytes: csv.count, windows: report.windows.count,
            best_analysis_s: bestAnalysis, best_file_s: bestFile,
            windows_within_2_spm: Double(close) / Double(max(judged, 1)),
            overall_error_spm: abs((report.cadence ?? 0) - truth))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(String(
                format: "%.0f min at %.0f Hz (%d windows, CSV %.1f MB): analysis %.3f s, file (read + analysis) %.3f s; "
                    + "%.1f %% of windows within 2 steps/min, overall error %.2f steps/min",
                minutes, rate, report.windows.count, Double(csv.count) / 1e6, bestAnalysis, bestFile,
                100 * result.windows_within_2_spm, result.overall_error_spm))
        }
    }
}
