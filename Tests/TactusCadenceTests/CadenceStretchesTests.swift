import TactusCadence
import TactusModel
import Testing

@Suite struct CadenceStretchesTests {
    /// A report whose windows (10 s every 2 s) have the cadences `at(time)` (nil: still).
    static func report(seconds: Double, _ at: (Double) -> Double?) -> CadenceReport {
        let windows = stride(from: 0.0, through: seconds - 10, by: 2).map { start -> CadenceWindow in
            let cadence = at(start + 5)
            return CadenceWindow(
                start: start, end: start + 10, status: cadence == nil ? .still : .steps, cadence: cadence,
                confidence: cadence == nil ? 0 : 0.9, movement: 0.3)
        }
        return CadenceReport(
            file: "run.csv", format: .plain, unit: .standardGravity, unitEvidence: .gravity, includesGravity: true,
            samples: Int(seconds * 100), duration: seconds, sampleRate: 100, cadence: nil, stepSeconds: 0, windows: windows)
    }

    @Test func plateausBecomeStretchesAndAPauseStaysInItsStretch() {
        // 5 min at 150 (±1 of noise), a 20 s stop, 5 min at 150, then 10 min at 171.
        let report = Self.report(seconds: 1220) { time in
            let wobble = Double(Int(time) % 3) - 1
            if time < 300 { return 150 + wobble }
            if time < 320 { return nil }
            if time < 620 { return 150 + wobble }
            return 171 + wobble
        }
        let stretches = report.steadyStretches()
        #expect(stretches.count == 2)
        #expect(abs(stretches[0].cadence - 150) < 0.5 && abs(stretches[1].cadence - 171) < 0.5)
        #expect(abs(stretches[0].duration - 620) <= 4 && abs(stretches[1].duration - 600) <= 4)
        #expect(stretches[0].start == 0 && stretches[1].start == stretches[0].duration)
        #expect(abs(stretches.reduce(0) { $0 + $1.duration } - 1220) < 1e-9)
    }

    /// A cadence that changes at every window (a 16-hour zig-zag between 130 and 190 with a
    /// steady hour in the middle: 28,800 stretches of 2 s to absorb, the case of attack round 8's
    /// L3, whose merging took 1.85 s of the web gateway when each step scanned every stretch)
    /// gives stretches that cover the recording, end to end, and keep the steady hour.
    @Test func aCadenceChangingAtEveryWindowIsMergedWhole() {
        let report = Self.report(seconds: 57_600) { time in
            (28_800..<32_400).contains(time) ? 160 : (Int(time / 2) % 2 == 0 ? 130 : 190)
        }
        let stretches = report.steadyStretches()
        #expect(abs(stretches.reduce(0) { $0 + $1.duration } - 57_600) < 1e-6)
        #expect(stretches.contains { abs($0.cadence - 160) < 0.5 && $0.duration >= 3_500 }, "\(stretches.count) stretches")
        #expect(zip(stretches.dropFirst(), stretches).allSatisfy { abs($0.start - ($1.start + $1.duration)) < 1e-6 })
    }

    @Test func aRampBecomesAFewStepsEachWithinTheTolerance() {
        // 150 to 180 over 10 minutes.
        let report = Self.report(seconds: 600) { 150 + 30 * $0 / 600 }
        let stretches = report.steadyStretches(tolerance: 0.03, minimumSeconds: 60)
        #expect((3...8).contains(stretches.count), "\(stretches)")
        for stretch in stretches {
            let middle = stretch.start + stretch.duration / 2
            #expect(abs(stretch.cadence - (150 + 30 * middle / 600)) < 0.03 * 165, "\(stretch)")
        }
        #expect(stretches.map(\.cadence) == stretches.map(\.cadence).sorted())
    }

    @Test func aShortBurstJoinsItsNeighbour() {
        // 20 s of sprinting at 190 inside 4 minutes at 160.
        let report = Self.report(seconds: 240) { time in (100..<120).contains(time) ? 190 : 160 }
        let stretches = report.steadyStretches()
        #expect(stretches.count == 1)
        #expect(stretches.first.map { $0.duration } == 240)
    }

    @Test func noStepsNoStretches() {
        #expect(Self.report(seconds: 60) { _ in nil }.steadyStretches().isEmpty)
    }
}
