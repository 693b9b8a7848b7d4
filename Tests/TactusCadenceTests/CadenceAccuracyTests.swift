import Foundation
import TactusCadence
import TactusModel
import TactusTestSupport
import Testing

/// Synthesised recordings (see `StepRecordingSynth`) written in each logger's CSV layout, read
/// back and analysed: windows within 2 steps/min of the steps' own cadence, overall within 1.
@Suite struct CadenceAccuracyTests {
    struct Scenario: CustomTestStringConvertible, Sendable {
        var name: String
        var synth: StepRecordingSynth
        var layout: StepRecordingSynth.Recording.CSVLayout
        var testDescription: String { name }
    }

    static func scenario(
        _ name: String, _ stretches: [StepRecordingSynth.Stretch], rate: Double, layout: StepRecordingSynth.Recording.CSVLayout,
        seed: UInt64, configure: (inout StepRecordingSynth) -> Void = { _ in }
    ) -> Scenario {
        var synth = StepRecordingSynth(stretches: stretches)
        synth.rate = rate
        synth.seed = seed
        configure(&synth)
        return Scenario(name: name, synth: synth, layout: layout)
    }

    static let scenarios: [Scenario] = [
        scenario("running 170, 100 Hz, t,x,y,z in m/s^2", [.init(seconds: 120, from: 170)], rate: 100, layout: .plain, seed: 1),
        scenario("walking 105, 50 Hz, Sensor Logger without gravity", [.init(seconds: 120, from: 105)], rate: 50,
            layout: .sensorLogger, seed: 2) { $0.includesGravity = false; $0.impulse = 0.6; $0.bounce = 0.15 },
        scenario("ramps 150-185-160, 200 Hz irregular, phyphox", [
            .init(seconds: 40, from: 150), .init(seconds: 40, from: 150, to: 185), .init(seconds: 40, from: 185),
            .init(seconds: 40, from: 185, to: 160),
        ], rate: 200, layout: .phyphox, seed: 3) { $0.timeJitter = 0.8 },
        scenario("sprint 200 with strong arm swing, 500 Hz, Physics Toolbox in g", [.init(seconds: 90, from: 200)], rate: 500,
            layout: .physicsToolbox, seed: 4) { $0.unitScale = 1; $0.armSwing = 0.6; $0.asymmetry = 0.3 },
        scenario("walking 95, 25 Hz, Physics Toolbox clock times in g", [.init(seconds: 120, from: 95)], rate: 25,
            layout: .physicsToolboxClock, seed: 5) { $0.unitScale = 1; $0.impulse = 0.5; $0.bounce = 0.15 },
        scenario("jog 140, 100 Hz, phyphox with decimal commas, jittered steps", [.init(seconds: 100, from: 140)], rate: 100,
            layout: .phyphoxDecimalComma, seed: 6) { $0.stepJitter = 0.04; $0.noise = 0.05 },
        scenario("fast walk 125 in the hand (arm swing as strong as the steps), 60 Hz", [.init(seconds: 100, from: 125)], rate: 60,
            layout: .plain, seed: 7) { $0.armSwing = 0.5; $0.impulse = 0.7 },
        scenario("run 180 without gravity in g, 100 Hz irregular", [.init(seconds: 100, from: 180)], rate: 100,
            layout: .plain, seed: 8) { $0.includesGravity = false; $0.unitScale = 1; $0.timeJitter = 0.9 },
        scenario("walk 92 to run 208, 100 Hz", [.init(seconds: 60, from: 92), .init(seconds: 120, from: 92, to: 208),
            .init(seconds: 40, from: 208)], rate: 100, layout: .sensorLogger, seed: 9),
        scenario("run 165 with the phone turning in the hand (0.5 rad/s), 100 Hz", [.init(seconds: 100, from: 165)], rate: 100,
            layout: .plain, seed: 10) { $0.turnRate = 0.5; $0.armSwing = 0.4 },
        scenario("walk 110 turning, without gravity, 50 Hz", [.init(seconds: 100, from: 110)], rate: 50,
            layout: .plain, seed: 14) { $0.turnRate = 0.3; $0.includesGravity = false; $0.impulse = 0.6 },
        scenario("walk 100 without gravity in g, no unit in the header, 100 Hz", [.init(seconds: 100, from: 100)], rate: 100,
            layout: .plain, seed: 15) {
                $0.includesGravity = false
                $0.unitScale = 1
                ($0.impulse, $0.bounce, $0.armSwing) = (0.4, 0.1, 0.15)
            },
    ]

    @Test(arguments: scenarios)
    func windowsWithinTwoAndOverallWithinOneStepPerMinute(_ scenario: Scenario) throws {
        let recording = scenario.synth.render()
        let report = try CadenceAnalyzer().analyze(
            RecordingReader.read(Array(recording.csv(scenario.layout).utf8), file: scenario.name), file: scenario.name)
        var judged = 0, close = 0
        var truths: [Double] = [], found: [Double] = []
        for window in report.windows {
            guard let truth = recording.cadence(from: window.start, to: window.end) else { continue }
            judged += 1
            truths.append(truth)
            if let cadence = window.cadence {
                found.append(cadence)
                if abs(cadence - truth) <= 2 { close += 1 }
            }
        }
        #expect(judged >= report.windows.count - 2)
        #expect(Double(close) >= 0.95 * Double(judged), "\(close) of \(judged) windows within 2 steps/min")
        let truth = truths.reduce(0, +) / Double(truths.count)
        let overall = try #require(report.cadence)
        #expect(abs(overall - truth) <= 1, "overall \(overall) vs \(truth)")
    }

    @Test func theStandingStillWindowsAreMarkedAndTheOthersMeasured() throws {
        var synth = StepRecordingSynth(stretches: [
            .init(seconds: 30, from: 0), .init(seconds: 60, from: 165), .init(seconds: 30, from: 0), .init(seconds: 40, from: 120),
        ])
        synth.seed = 11
        let recording = synth.render()
        let report = try CadenceAnalyzer().analyze(
            RecordingReader.read(Array(recording.csv(.plain).utf8), file: "still.csv"), file: "still.csv")
        for window in report.windows {
            // Standing still, away from the steps' impulses either side.
            let still = window.end <= 29.8 || window.start >= 90.5 && window.end <= 119.8
            if still { #expect(window.status == .still, "window at \(window.start) s: \(window)") }
            if let truth = recording.cadence(from: window.start, to: window.end) {
                #expect(window.status == .steps, "window at \(window.start) s")
                #expect(abs((window.cadence ?? 0) - truth) <= 2, "window at \(window.start) s: \(window.cadence ?? 0) vs \(truth)")
            }
        }
        #expect(report.count(.still) >= 20)
        #expect(report.stepSeconds >= 80 && report.stepSeconds <= 110)
    }

    @Test func movementWithoutStepsIsIrregular() throws {
        // Random movement (low-passed noise, 0.3 g): no period.
        var random = SeededGenerator(seed: 12)
        let rate = 100.0
        var state = (0.0, 0.0, 0.0)
        var times: [Double] = [], x: [Double] = [], y: [Double] = [], z: [Double] = []
        for index in 0..<6000 {
            state.0 = 0.9 * state.0 + 0.3 * Double(random.nextSigned())
            state.1 = 0.9 * state.1 + 0.3 * Double(random.nextSigned())
            state.2 = 0.9 * state.2 + 0.3 * Double(random.nextSigned())
            times.append(Double(index) / rate)
            x.append(state.0)
            y.append(state.1)
            z.append(1 + state.2)
        }
        let recording = AccelerometerRecording(format: .plain, times: times, x: x, y: y, z: z, declaredUnit: .standardGravity)
        let report = try CadenceAnalyzer().analyze(recording, file: "shaking")
        #expect(report.count(.irregular) >= report.windows.count * 9 / 10, "\(report.windows.map(\.status))")
    }

    @Test func thePeriodIsRefinedBelowOneSample() throws {
        // At 100 Hz, integer lags give 176.5 or 171.4 steps/min around 173.3.
        var synth = StepRecordingSynth(stretches: [.init(seconds: 60, from: 173.3)])
        synth.stepJitter = 0
        synth.seed = 13
        let recording = synth.render()
        let analysed = AccelerometerRecording(
            format: .plain, times: recording.times, x: recording.x, y: recording.y, z: recording.z, declaredUnit: nil)
        let report = try CadenceAnalyzer().analyze(analysed, file: "refined")
        for window in report.windows {
            let cadence = try #require(window.cadence)
            #expect(abs(cadence - 173.3) < 0.5, "window at \(window.start) s: \(cadence)")
        }
    }

    @Test func theUnitIsRecognisedFromGravity() throws {
        for (scale, unit) in [(1.0, AccelerationUnit.standardGravity), (9.80665, .metresPerSecondSquared)] {
            var synth = StepRecordingSynth(stretches: [.init(seconds: 30, from: 160)])
            synth.unitScale = scale
            let recording = synth.render()
            let report = try CadenceAnalyzer().analyze(
                RecordingReader.read(Array(recording.csv(.plain).utf8), file: "unit.csv"), file: "unit.csv")
            #expect(report.unit == unit)
            #expect(report.unitEvidence == .gravity)
            #expect(report.includesGravity == true)
            #expect(report.windows.allSatisfy { $0.status == .steps })
        }
    }
}
