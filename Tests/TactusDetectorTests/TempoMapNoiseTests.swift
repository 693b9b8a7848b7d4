import Foundation
import TactusDetector
import Testing

/// What the tempo map must not take for a change: detectors that read one steady song a little
/// apart, one of them dropping out, and the slow wander of overlapping windows on a live or
/// swung song. Windows as the default presets make them: 12 s long, every 3 s.
@Suite struct TempoMapNoiseTests {
    /// One detector's analysis of a song of `count` windows whose tempo at window `index` is
    /// `tempo(index)` (nil: a silent window).
    func analysis(_ name: String, bpm: Double, count: Int = 60, tempo: (Int) -> Double?) -> TempoAnalysis {
        let windows = (0..<count).map { index in
            AnalysisWindow(startS: Double(index) * 3, durationS: 12, energy: 0.01, bpm: tempo(index), strength: 0.5)
        }
        return TempoAnalysis(
            descriptor: DetectorDescriptor(name: name, version: "1", summary: "test", specific: []), params: ParameterSet(),
            output: DetectorOutput(bpm: bpm, confidence: 0.5, candidates: [TempoCandidate(bpm: bpm, strength: 1)], windows: windows),
            seconds: 0)
    }

    /// A small deterministic wobble of about ±0.3 %, different for each detector and window.
    func wobble(_ index: Int, _ seed: Int) -> Double {
        1 + 0.003 * sin(Double(index * 7 + seed * 13))
    }

    @Test func detectorsThatReadASteadySongApartGiveOneSegmentWhenOneOfThemDropsOut() throws {
        // Two detectors read 101 BPM, one 97 (4 % apart: beyond the tolerance within which
        // moments agree); the second 101 falls silent for the song's second half. Taken at face
        // value the moments would step from 101 to 97 where it stops.
        let analyses = [
            analysis("low", bpm: 97) { 97 * wobble($0, 1) },
            analysis("high", bpm: 101) { 101 * wobble($0, 2) },
            analysis("dropping", bpm: 101) { $0 < 30 ? 101 * wobble($0, 3) : nil },
        ]
        let map = try #require(TempoMap.of(analyses, consensus: 100))
        #expect(map.stable, "\(map.segments)")
        #expect(map.segments.count == 1)
    }

    /// The error of a reading over 3 s of audio, about ±2.5 % (uniform, deterministic).
    func blockError(_ block: Int, _ seed: Int) -> Double {
        var state = UInt64(truncatingIfNeeded: block &* 7919 &+ seed &* 104_729) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        state ^= state >> 29
        state = state &* 0xBF58_476D_1CE4_E5B9
        state ^= state >> 32
        return 0.025 * (2 * Double(state % 1_000_000) / 1_000_000 - 1) * 3.0.squareRoot()
    }

    @Test func theWanderOfOverlappingWindowsOnASteadySongIsOneSegmentWithItsRange() throws {
        // A swung groove at 73 BPM whose 3-s stretches each read a little off (as one-drop
        // reggae does): each 12-s window averages four of them, so neighbouring windows share
        // three quarters of their error and read almost alike, while windows 12 s apart differ
        // by the whole of it. The windows wander over 71 to 75 BPM, slowly.
        let reading = { (index: Int, seed: Int) -> Double in
            73 * exp((0..<4).map { blockError(index + $0, seed) }.reduce(0, +) / 4)
        }
        let analyses = [
            analysis("one", bpm: 73) { reading($0, 1) },
            analysis("two", bpm: 73) { reading($0, 1) * wobble($0, 2) },
        ]
        let map = try #require(TempoMap.of(analyses, consensus: 73))
        #expect(map.stable, "\(map.segments)")
        #expect(map.minBPM < 72.5 && map.maxBPM > 74.5, "the range shows the wander: \(map.minBPM)...\(map.maxBPM)")
    }

    @Test func aStepOfFivePercentIsStillFoundAmongTheWander() throws {
        // The same wander, but the song moves from 100 to 105 BPM at window 30 (about 94 s).
        let tempo = { (index: Int) -> Double in
            (index < 30 ? 100 : 105) * (1 + 0.01 * sin(Double(index) * 2 * .pi / 10))
        }
        let analyses = [
            analysis("one", bpm: 102) { tempo($0) * wobble($0, 1) },
            analysis("two", bpm: 102) { tempo($0) * wobble($0, 2) },
        ]
        let map = try #require(TempoMap.of(analyses, consensus: 102))
        #expect(map.segments.count == 2, "\(map.segments)")
        if map.segments.count == 2 {
            #expect(abs(map.segments[0].endS - 94.5) <= 6, "\(map.segments)")
            #expect(abs(map.segments[1].startBPM / map.segments[0].endBPM - 1.05) < 0.02, "\(map.segments)")
        }
    }

    @Test(arguments: [true, false])
    func aChangeThatOneDetectorReadsSteadyThroughIsNoChange(ramp: Bool) throws {
        // A piano piece at 87.5 BPM: one detector reads it steady to ±0.3 %, two others drift
        // up by 4.5 % together (as onset-based readings of a melody can), along the whole song
        // or at once halfway. Their drift is theirs, not the song's.
        let drift = { (index: Int) -> Double in ramp ? 1 + 0.045 * Double(index) / 59 : (index < 30 ? 1 : 1.045) }
        let analyses = [
            analysis("steady", bpm: 87.5) { 87.5 * wobble($0, 1) },
            analysis("drifting", bpm: 90) { 88 * drift($0) * wobble($0, 2) },
            analysis("wandering", bpm: 90) { 88.5 * drift($0) * wobble($0, 3) },
        ]
        let map = try #require(TempoMap.of(analyses, consensus: 89))
        #expect(map.stable, "\(map.segments)")
    }

    @Test func aRampEveryDetectorFollowsIsFoundThoughOneFollowsItNoisily() throws {
        // 100 to 106 BPM over the song: two detectors follow it closely, the third with readings
        // ±2.5 % off; too noisy to hold the change back, it follows it too.
        let tempo = { (index: Int) -> Double in 100 * (1 + 0.06 * Double(index) / 59) }
        let analyses = [
            analysis("one", bpm: 103) { tempo($0) * wobble($0, 1) },
            analysis("two", bpm: 103) { tempo($0) * wobble($0, 2) },
            analysis("noisy", bpm: 103) { tempo($0) * exp(blockError($0, 3)) },
        ]
        let map = try #require(TempoMap.of(analyses, consensus: 103))
        #expect(!map.stable, "\(map.segments)")
        #expect(map.segments.count == 1 && !map.segments[0].isSteady, "\(map.segments)")
        if let ramp = map.segments.first {
            #expect(abs(ramp.endBPM / ramp.startBPM - 1.06) < 0.02, "\(map.segments)")
        }
    }
}
