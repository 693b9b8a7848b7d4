import Foundation
import TactusCadence
import TactusModel
import TactusTestSupport

/// The workout fuzz target: one input is the bytes of a watch's workout, read as a FIT file and
/// as a GPX and a TCX document (whatever its content claims), each workout read analysed, and
/// the bytes analysed as `tactus cadence` would (recognised by their content).
///
/// Reading may refuse the bytes with a ``CadenceError``; it must never trap, and what it
/// delivers must be sane: every number of the report finite (it is sent as JSON), the windows
/// within the workout's span, a cadence in steps only where the sport counts steps. A failed
/// property stops the process (`fatalError`), which libFuzzer records as a crash.
enum WorkoutFuzzer {
    /// Reads and analyses `bytes` every way; returns what each gave ("fit ok, gpx malformed-workout...").
    @discardableResult
    static func run(_ bytes: [UInt8]) -> String {
        var outcomes: [String] = []
        for format in [RecordingFormat.fit, .gpx, .tcx] {
            do throws(CadenceError) {
                let workout = try WorkoutReader.read(bytes, format: format, file: "fuzz-input")
                check(workout.samples.count <= Workout.maximumSamples, "at most the maximum of samples", bytes)
                outcomes.append("\(format.rawValue) \(analyse(workout, bytes))")
            } catch {
                outcomes.append("\(format.rawValue) \(named(error, bytes))")
            }
        }
        do throws(CadenceError) {
            let report = try CadenceAnalyzer().analyze(bytes, file: "fuzz-input")
            checkReport(report, bytes)
            outcomes.append("as recognised ok")
        } catch {
            outcomes.append("as recognised \(named(error, bytes))")
        }
        return outcomes.joined(separator: ", ")
    }

    private static func analyse(_ workout: Workout, _ bytes: [UInt8]) -> String {
        do throws(CadenceError) {
            checkReport(try WorkoutAnalyzer().analyze(workout, file: "fuzz-input"), bytes)
            return "ok"
        } catch {
            return named(error, bytes)
        }
    }

    private static func named(_ error: CadenceError, _ bytes: [UInt8]) -> String {
        check(error.file == "fuzz-input" && error.description.hasPrefix("fuzz-input: ") && !error.message.isEmpty,
            "an error names its input and the problem", bytes)
        return error.code.rawValue
    }

    private static func checkReport(_ report: CadenceReport, _ bytes: [UInt8]) {
        do {
            _ = try JSONEncoder().encode(report)
        } catch {
            fail("the report is no JSON (a number that is not finite?): \(error)", bytes)
        }
        check(report.duration >= 0 && report.duration <= RecordingReader.maximumSeconds, "a duration within a day", bytes)
        check(report.windows.allSatisfy { $0.start >= 0 && $0.end <= report.duration + 1e-6 }, "windows within the span", bytes)
        let steps = report.cadenceHeld?.isSteps ?? true
        check(steps || (report.cadence == nil && report.windows.allSatisfy { $0.cadence == nil }),
            "no steps where the sport counts none", bytes)
        check(report.windows.allSatisfy { $0.cadence.map { (90...210).contains($0) } ?? true }, "cadences in 90-210", bytes)
    }

    private static func check(_ condition: Bool, _ property: String, _ input: [UInt8]) {
        if !condition { fail("property failed: \(property)", input) }
    }

    private static func fail(_ message: String, _ input: [UInt8]) -> Never {
        fatalError("\(message); input of \(input.count) bytes")
    }

    /// The seed corpus: a short run and ride in each format, a few KB each.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let run = WorkoutSecond.steady(15, cadence: 85.5, heartRate: 150, speed: 3)
        let ride = WorkoutSecond.steady(15, cadence: 90, heartRate: 140, speed: 8)
        return [
            ("run.fit", WorkoutFiles.fit(run, sports: [FITFileWriter.Profile.running])),
            ("run-big-endian.fit", WorkoutFiles.fit(run, bigEndian: true)),
            ("ride.fit", WorkoutFiles.fit(ride, sports: [FITFileWriter.Profile.cycling])),
            ("run.gpx", Array(WorkoutFiles.gpx(run, type: "running").utf8)),
            ("ride.gpx", Array(WorkoutFiles.gpx(ride, type: "cycling").utf8)),
            ("run.tcx", Array(WorkoutFiles.tcx(run).utf8)),
            ("ride.tcx", Array(WorkoutFiles.tcx(ride, sport: "Biking").utf8)),
        ]
    }
}
