import Foundation
import Testing
import TactusAnalysis
import TactusDetector
import TactusTestSupport

@Suite struct CombFilterTempoTests {
    static let rate = 22_050

    @Test(arguments: ["default", "classic"], [61.0, 97.0, 133.0, 171.0, 198.0])
    func clickTracksGiveTheirTempoOrAnOctave(preset: String, bpm: Double) throws {
        let signal = Synth.clickTrack(bpm: bpm, seconds: 16, sampleRate: Double(Self.rate))
        let result = try TestSongs.analyze([signal], sampleRate: Self.rate, detectors: [TestSongs.combFilter(preset)])
        let analysis = try #require(result.analyses.first)
        #expect(TempoOctave.matches(analysis.bpm, bpm), "\(preset): \(analysis.bpm ?? 0) for \(bpm)")
        #expect(analysis.confidence > 0.3)
    }

    @Test(arguments: [(64.0, "backbeat"), (88.0, "halfTime"), (116.0, "backbeat"), (152.0, "fourOnTheFloor"),
                      (183.0, "halfTime"), (200.0, "backbeat")])
    func drumPatternsGiveTheirTempoOrAnOctave(bpm: Double, patternName: String) throws {
        let pattern: Synth.Pattern = switch patternName {
        case "backbeat": .backbeat
        case "halfTime": .halfTime
        default: .fourOnTheFloor
        }
        let signal = Synth.drumPattern(bpm: bpm, seconds: 20, sampleRate: Double(Self.rate), pattern: pattern)
        let result = try TestSongs.analyze([signal], sampleRate: Self.rate, detectors: [TestSongs.combFilter()])
        let analysis = try #require(result.analyses.first)
        #expect(TempoOctave.matches(analysis.bpm, bpm), "\(analysis.bpm ?? 0) for \(bpm) \(patternName): \(analysis.candidates)")
        // The octave the detector did not choose is among the candidates.
        #expect(analysis.candidates.count >= 2 && analysis.candidates.count <= 5)
        #expect(analysis.candidates.first?.strength == 1)
    }

    @Test(arguments: [84.0, 101.0, 124.0, 140.0])
    func theDefaultPresetFindsTheWrittenTempoOfFourOnTheFloor(bpm: Double) throws {
        let signal = Synth.drumPattern(bpm: bpm, seconds: 20, sampleRate: Double(Self.rate), pattern: .fourOnTheFloor)
        let result = try TestSongs.analyze([signal], sampleRate: Self.rate, format: .flac, detectors: [TestSongs.combFilter()])
        let found = try #require(result.analyses.first?.bpm)
        #expect(abs(found - bpm) <= 0.01 * bpm, "\(found) for \(bpm)")
    }

    @Test func theClassicPresetAnalysesOneExcerptFromTheMiddle() throws {
        let signal = Synth.drumPattern(bpm: 120, seconds: 30, sampleRate: 44_100, pattern: .fourOnTheFloor)
        let result = try TestSongs.analyze([signal], sampleRate: 44_100, detectors: [TestSongs.combFilter("classic")])
        let analysis = try #require(result.analyses.first)
        #expect(abs((analysis.bpm ?? 0) - 120) <= 1.2)
        let window = try #require(analysis.windows.first)
        #expect(analysis.windows.count == 1)
        #expect(abs(window.durationS - 131_072 / 44_100) < 1e-6)
        #expect(abs(window.startS - (30 - 131_072 / 44_100) / 2) < 0.01)
        #expect(window.energy > 0)
    }

    @Test func aTempoRampGivesATempoWithinTheRamp() throws {
        let signal = Synth.drumPattern(bpm: 100, seconds: 30, sampleRate: Double(Self.rate), pattern: .backbeat, endBPM: 110)
        let result = try TestSongs.analyze([signal], sampleRate: Self.rate, detectors: [TestSongs.combFilter()])
        let analysis = try #require(result.analyses.first)
        let found = try #require(analysis.bpm)
        #expect(found >= 99 && found <= 111, "\(found)")
        // The windows follow the ramp: early windows slower than late ones.
        let tempi = analysis.windows.compactMap(\.bpm).filter { $0 > 90 && $0 < 120 }
        #expect(tempi.count >= 4)
        #expect(tempi.first! < tempi.last!)
    }

    @Test(arguments: ["default", "classic"])
    func silenceHasNoTempo(preset: String) throws {
        let result = try TestSongs.analyze(
            [Synth.silence(seconds: 10, sampleRate: Double(Self.rate))], sampleRate: Self.rate,
            detectors: [TestSongs.combFilter(preset)])
        let analysis = try #require(result.analyses.first)
        #expect(analysis.bpm == nil)
        #expect(analysis.reason == "silence")
        #expect(analysis.confidence == 0)
        #expect(result.consensus.bpm == nil)
    }

    @Test(arguments: ["default", "classic"])
    func whiteNoiseHasNoTempoOrALowConfidence(preset: String) throws {
        let result = try TestSongs.analyze(
            [Synth.whiteNoise(seconds: 10, sampleRate: Double(Self.rate))], sampleRate: Self.rate,
            detectors: [TestSongs.combFilter(preset)])
        let analysis = try #require(result.analyses.first)
        #expect(analysis.bpm == nil || analysis.confidence < 0.2, "\(analysis.bpm ?? 0) at \(analysis.confidence)")
    }

    @Test func aSteadyToneHasNoTempo() throws {
        let result = try TestSongs.analyze(
            [Synth.sine(hz: 440, seconds: 10, sampleRate: Double(Self.rate))], sampleRate: Self.rate,
            detectors: [TestSongs.combFilter()])
        #expect(result.analyses.first?.bpm == nil)
    }

    @Test func aNarrowRangeChoosesTheOctaveInIt() throws {
        let signal = Synth.drumPattern(bpm: 90, seconds: 16, sampleRate: Double(Self.rate), pattern: .backbeat)
        let result = try TestSongs.analyze(
            [signal], sampleRate: Self.rate,
            detectors: [TestSongs.combFilter("default", ["min_bpm": .number(150), "max_bpm": .number(200)])])
        let found = try #require(result.analyses.first?.bpm)
        #expect(abs(found - 180) <= 1.8)
    }
}
