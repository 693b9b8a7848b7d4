import TactusDSP
import TactusDetector

/// The settings of the `default` autocorrelation analysis.
struct OnsetAutocorrelationSettings {
    var envelope: OnsetStrengthConfiguration
    var salience: BeatMultipleSalience
    var vote: TempoVoteConfiguration

    init(_ parameters: ParameterSet) {
        envelope = OnsetStrengthConfiguration(
            bandEdgesHz: parameters.numbers("band_edges_hz"), frameRate: parameters.number("envelope_hz"),
            compression: parameters.number("compression"), minimumRise: parameters.number("minimum_rise"))
        salience = BeatMultipleSalience(multiples: parameters.integer("beat_multiples"))
        vote = TempoVoteConfiguration(
            windowSeconds: parameters.number("window_s"), hopSeconds: parameters.number("hop_s"),
            minBPM: parameters.number("min_bpm"), maxBPM: parameters.number("max_bpm"),
            priorBPM: parameters.number("prior_bpm"), priorOctaves: parameters.number("prior_octaves"))
    }
}

/// The `default` preset: windowed autocorrelation of the band-wise onset-strength envelope,
/// decided by the shared tempo vote.
final class OnsetAutocorrelationSession: DetectorSession {
    private let settings: OnsetAutocorrelationSettings
    private let accumulator: OnsetStrengthAccumulator
    private var finite = FiniteSamples()

    init(settings: OnsetAutocorrelationSettings, sampleRate: Double) {
        self.settings = settings
        accumulator = OnsetStrengthAccumulator(sampleRate: sampleRate, configuration: settings.envelope)
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { accumulator.consume($0) }
    }

    func finish() -> DetectorOutput {
        let envelope = accumulator.finish()
        let autocorrelation = EnvelopeAutocorrelation()
        let salience = settings.salience
        let result = TempoVote(configuration: settings.vote).decide(envelope) { window, bpms in
            salience(autocorrelation.summed(window), window: window, bpms: bpms)
        }
        return DetectorOutput(voted: result)
    }
}
