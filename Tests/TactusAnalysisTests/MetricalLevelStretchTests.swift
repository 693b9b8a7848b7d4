import Foundation
import Testing
import TactusAnalysis
import TactusDetector
import TactusTestSupport

/// A song played 4 % slower or faster keeps its metrical level (issue 29): the same drum
/// pattern synthesised at 0.96, 1 and 1.04 times its tempo is read at the same level, each
/// reading divided by its factor within 4 % of the tempo. These slow songs sat where the
/// detectors' tempo priors used to tip the octave decision: a prior centred at 160 BPM that
/// narrow changed its preference for the double tempo by 6 to 9 % for each 4 % of tempo, so a
/// song whose evidence for its own level was only that much stronger was read at its double
/// when slowed.
@Suite struct MetricalLevelStretchTests {
    static let rate = 22_050.0
    static let factors = [0.96, 1.0, 1.04]

    /// The default detector `name`'s reading of `pattern` at `bpm` times each factor, divided
    /// by the factor.
    private func readings(_ name: String, bpm: Double, pattern: Synth.Pattern) throws -> [Double] {
        let analyzer = SongAnalyzer(detectors: [try BuiltinDetectors.registry.make(name)])
        return Self.factors.map { factor in
            let signal = Synth.drumPattern(bpm: bpm * factor, seconds: 30, sampleRate: Self.rate, pattern: pattern)
            return (analyzer.analyze(samples: signal, sampleRate: Self.rate).analyses.first?.bpm ?? 0) / factor
        }
    }

    @Test(arguments: [("fourOnTheFloor", Synth.Pattern.fourOnTheFloor), ("backbeat", .backbeat)])
    func theCombFilterKeepsASlowSongsLevel(patternName: String, pattern: Synth.Pattern) throws {
        let found = try readings("comb-filter", bpm: 78, pattern: pattern)
        #expect(found.allSatisfy { TempoRelation.matches($0, 78) }, "\(patternName) at 78 BPM x0.96, x1, x1.04: \(found)")
    }

    @Test(arguments: [("fourOnTheFloor", Synth.Pattern.fourOnTheFloor), ("backbeat", .backbeat)])
    func statisticalEnergyKeepsASlowSongsLevel(patternName: String, pattern: Synth.Pattern) throws {
        let found = try readings("statistical-energy", bpm: 66, pattern: pattern)
        #expect(found.allSatisfy { TempoRelation.matches($0, 66) }, "\(patternName) at 66 BPM x0.96, x1, x1.04: \(found)")
    }
}

/// A range boundary is no periodicity: a song whose tempo lies just above `max_bpm` is read at
/// one of its own periodicities inside the range, and the boundary, where the evidence was only
/// cut off on its way up to the song's real peak, is neither its tempo nor one of its candidates. (A song near the
/// top of the default range, 200 BPM, changed level when slowed by 4 % because of it.)
@Suite struct RangeBoundaryTests {
    @Test(arguments: ["comb-filter", "statistical-energy", "autocorrelation"])
    func aTempoJustAboveTheRangeIsNotReadAtTheBoundary(detector: String) throws {
        let rate = 22_050.0, bpm = 128.0, maxBPM = 122.0
        let made = try BuiltinDetectors.registry.make(detector, parameters: ParameterSet(["max_bpm": .number(maxBPM)]))
        let signal = Synth.drumPattern(bpm: bpm, seconds: 30, sampleRate: rate, pattern: .fourOnTheFloor)
        let analysis = try #require(SongAnalyzer(detectors: [made]).analyze(samples: signal, sampleRate: rate).analyses.first)
        let tempo = try #require(analysis.bpm)
        #expect(tempo < maxBPM * 0.98, "\(detector): \(tempo)")
        let atBoundary = analysis.candidates.filter { abs($0.bpm / maxBPM - 1) < 0.02 }
        #expect(atBoundary.isEmpty, "\(detector): candidates \(analysis.candidates)")
    }
}
