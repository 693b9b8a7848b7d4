import TactusDetector
import TactusDSP

/// The `windowed` comb filter (preset `default`): a band-wise onset envelope of the whole song
/// at a low rate, comb energies per window from each window's band autocorrelations, and the
/// shared windowed vote.
final class WindowedCombFilterSession: DetectorSession {
    private let envelope: OnsetStrengthAccumulator
    private let vote: TempoVote
    private let weights: [Double]

    init(parameters: ParameterSet, format: SignalFormat) {
        envelope = OnsetStrengthAccumulator(
            sampleRate: format.sampleRate,
            configuration: OnsetStrengthConfiguration(
                bandEdgesHz: parameters.numbers("band_edges_hz"), frameRate: parameters.number("envelope_hz"),
                compression: parameters.number("compression")))
        vote = TempoVote(
            configuration: TempoVoteConfiguration(
                windowSeconds: parameters.number("window_s"), hopSeconds: parameters.number("hop_s"),
                minBPM: parameters.number("min_bpm"), maxBPM: parameters.number("max_bpm"),
                priorBPM: parameters.number("prior_bpm"), priorOctaves: parameters.number("prior_octaves")))
        weights = CombEnergy.weights(pulses: parameters.integer("pulses"))
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        envelope.consume(samples)
    }

    func finish() -> DetectorOutput {
        let autocorrelation = EnvelopeAutocorrelation()
        let weights = self.weights
        let total = weights.reduce(0, +)
        let result = vote.decide(envelope.finish()) { window, bpms in
            let r = autocorrelation.summed(window)
            guard r[0] > 0 else { return bpms.map { _ in 0 } }
            let scale = 1 / (total * Double(r[0]))
            return bpms.map { CombEnergy.excess(r, lag: window.lag(ofBPM: $0), weights: weights) * scale }
        }
        return DetectorOutput(voted: result)
    }
}
