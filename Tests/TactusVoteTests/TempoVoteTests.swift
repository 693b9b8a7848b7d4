import Foundation
import Testing
import TactusDSP
import TactusDetector
import TactusTestSupport
import TactusVote

private func envelope(of signal: [Float], sampleRate: Double, blockSize: Int = 1000) -> OnsetStrengthEnvelope {
    OnsetStrengthAccumulator.envelope(
        of: signal, sampleRate: sampleRate, configuration: OnsetStrengthConfiguration(bandEdgesHz: [0, 500, 2000, 8000]),
        blockSize: blockSize)
}

/// The plain autocorrelation evidence of the ``TempoVote`` documentation.
private func autocorrelationEvidence() -> TempoVote.Evidence {
    let autocorrelation = EnvelopeAutocorrelation()
    return { window, grid in
        var r = [Float](repeating: 0, count: max(window.frameCount, 1))
        for band in autocorrelation.perBand(window) {
            for lag in band.indices { r[lag] += band[lag] }
        }
        guard r[0] > 0 else { return .none(count: grid.count) }
        let curve = grid.bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / Double(r[0]) }
        return PeriodicityEvidence(strength: curve.max() ?? 0, curve: curve)
    }
}

@Suite struct TempoVoteTests {
    @Test(arguments: [72.0, 123.0, 181.0])
    func aClickTrackVotesForItsTempo(bpm: Double) throws {
        let env = envelope(of: Synth.clickTrack(bpm: bpm, seconds: 20, sampleRate: 22_050), sampleRate: 22_050)
        let vote = TempoVote(configuration: TempoVoteConfiguration(windowSeconds: 8, hopSeconds: 4, minBPM: 60, maxBPM: 200))
        let result = vote.decide(env, evidence: autocorrelationEvidence())
        let found = try #require(result.bpm)
        let factor = [1.0, 2, 0.5, 3, 1.0 / 3].first { abs(found - bpm * $0) <= 0.01 * bpm * $0 }
        #expect(factor != nil, "found \(found) for \(bpm)")
        #expect(result.windows.count == 4)  // at 0, 4 and 8 s, and one ending at the song's end
        #expect(result.windows.allSatisfy { $0.energy > 0 && $0.strength > 0.3 })
        #expect(result.confidence > 0.3)
        #expect(result.candidates.first?.bpm == found)
        #expect(result.candidates.count <= 5)
    }

    @Test func silenceHasNoTempo() {
        let env = envelope(of: [Float](repeating: 0, count: 22_050 * 10), sampleRate: 22_050)
        let result = TempoVote(configuration: TempoVoteConfiguration()).decide(env, evidence: autocorrelationEvidence())
        #expect(result.bpm == nil)
        #expect(result.reason == "silence")
        #expect(result.windows.allSatisfy { $0.bpm == nil && $0.energy == 0 })
    }

    @Test func aWindowLayoutCoversTheWholeSong() {
        let vote = TempoVote(configuration: TempoVoteConfiguration(windowSeconds: 8, hopSeconds: 4))
        #expect(vote.windowRanges(frameCount: 1000, frameRate: 100) == [0..<800, 200..<1000])
        #expect(vote.windowRanges(frameCount: 1200, frameRate: 100) == [0..<800, 400..<1200])
        #expect(vote.windowRanges(frameCount: 500, frameRate: 100) == [0..<500])
        #expect(abs(vote.grid.bpms.first! - 20) < 1e-9 && abs(vote.grid.bpms.last! - 600) < 1e-9)
    }
}

/// Evidence shaped like an autocorrelation of a metre: peaks at a beat period and its multiples.
private func metre(_ peaks: [(bpm: Double, height: Double)], grid: TempoGrid) -> [Double] {
    grid.bpms.map { bpm in
        peaks.map { $0.height * exp(-0.5 * pow(log2(bpm / $0.bpm) / 0.01, 2)) }.reduce(0, +)
    }
}

@Suite struct MetricalDecisionTests {
    let grid = TempoGrid(minBPM: 20, maxBPM: 600)
    let decision = MetricalDecision(groupingWeight: 0.5, subdivisionWeight: 1, priorBPM: 120, priorOctaves: 0)

    private func winner(_ evidence: PeriodicityEvidence, among bpms: [Double]) -> Double {
        let scores = bpms.map { decision.score(evidence, grid: grid, bpm: $0) }
        return bpms[scores.indices.max { scores[$0] < scores[$1] }!]
    }

    @Test func aBeatWithRegularSubdivisionsBeatsItsDottedLevel() {
        // 180 BPM music whose syncopation makes 120 (the dotted quarter) as periodic as the beat:
        // 120 has no regular subdivision at 240, the beat has its eighths at 360.
        let beat = metre([(180, 1), (120, 1), (90, 0.9), (360, 0.6), (60, 0.8)], grid: grid)
        #expect(winner(PeriodicityEvidence(strength: 1, curve: beat), among: [120, 180]) == 180)
    }

    @Test func theFasterOctaveWinsWhenItsSubdivisionsArePeriodicToo() {
        // A periodicity curve favours the slower level slightly (its period holds two beats);
        // the faster level wins when its own subdivision (off-beat hi-hats at 256) is as periodic
        // as the beat, and loses when it is not.
        let hats = metre([(128, 0.9), (64, 1), (256, 0.9), (32, 0.5)], grid: grid)
        #expect(winner(PeriodicityEvidence(strength: 1, curve: hats), among: [64, 128]) == 128)
        let noHats = metre([(128, 0.9), (64, 1), (256, 0.2), (32, 0.5)], grid: grid)
        #expect(winner(PeriodicityEvidence(strength: 1, curve: noHats), among: [64, 128]) == 64)
    }

    @Test func aWaltzKeepsItsQuarterNote() {
        // 3/4 at 134: bars at 44.7, eighths at 268; 201 (3/2) has neither a grouping nor a subdivision.
        let beat = metre([(134, 1), (44.7, 0.9), (268, 0.6), (67, 0.5), (201, 0.7)], grid: grid)
        #expect(winner(PeriodicityEvidence(strength: 1, curve: beat), among: [134, 201, 89.3]) == 134)
    }

    @Test func onlyTheSongsOwnPeriodicitiesAreCandidates() {
        // A 60 BPM click track repeats at 60 and its multiples of period only; 120 and 180 have
        // strong groupings (60) but are not periodicities themselves, so they are never chosen.
        let beat = metre([(60, 1), (30, 1), (20, 1)], grid: grid)
        let choices = decision.choices(PeriodicityEvidence(strength: 1, curve: beat), grid: grid, range: grid.indices(within: 60...200))
        #expect(choices.map(\.bpm).allSatisfy { abs($0 - 60) < 1 || $0 > 199 })
        #expect(abs((choices.first?.bpm ?? 0) - 60) < 0.5)
    }

    @Test func thePriorOnlyBreaksTies() {
        let prior = MetricalDecision(groupingWeight: 0, subdivisionWeight: 0, priorBPM: 120, priorOctaves: 1)
        #expect(prior.prior(120) == 1)
        #expect(abs(prior.prior(240) - exp(-0.5)) < 1e-12)
        let flat = MetricalDecision(groupingWeight: 0, subdivisionWeight: 0, priorBPM: 120, priorOctaves: 0)
        #expect(flat.prior(300) == 1)
    }
}
