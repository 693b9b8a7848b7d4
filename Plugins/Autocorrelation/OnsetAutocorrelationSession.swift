import TactusDSP
import TactusDetector

/// The settings of the `default` autocorrelation analysis.
struct OnsetAutocorrelationSettings {
    var envelope: OnsetStrengthConfiguration
    var salience: BeatMultipleSalience
    var vote: TempoVoteConfiguration

    /// Only digital silence is silent: a quiet song has a tempo like a loud one.
    static let silenceMeanSquare = 1e-30
    /// A song whose best tempo has less salience than this has no tempo; the bar only
    /// rejects signals with no repetition at all (see ``BeatMultipleSalience``).
    static let minimumSalience = 0.001

    init(_ parameters: ParameterSet) {
        envelope = OnsetStrengthConfiguration(
            bandEdgesHz: parameters.numbers("band_edges_hz"), frameRate: parameters.number("frame_rate_hz"),
            compression: parameters.number("compression"))
        salience = BeatMultipleSalience(multiples: parameters.integer("beat_multiples"))
        vote = TempoVoteConfiguration(
            windowSeconds: parameters.number("window_s"), hopSeconds: parameters.number("hop_s"),
            minBPM: parameters.number("min_bpm"), maxBPM: parameters.number("max_bpm"),
            priorBPM: parameters.number("prior_bpm"), priorOctaves: parameters.number("prior_octaves"),
            silenceMeanSquare: Self.silenceMeanSquare, minimumSalience: Self.minimumSalience)
    }
}

/// The `default` preset: windowed autocorrelation of the band-wise onset-strength envelope,
/// decided by the shared tempo vote.
final class OnsetAutocorrelationSession: DetectorSession {
    private let settings: OnsetAutocorrelationSettings
    private let accumulator: OnsetStrengthAccumulator
    private var level: LevelNormaliser
    private var normalised: [Float] = []

    init(settings: OnsetAutocorrelationSettings, sampleRate: Double) {
        self.settings = settings
        accumulator = OnsetStrengthAccumulator(sampleRate: sampleRate, configuration: settings.envelope)
        level = LevelNormaliser(sampleRate: sampleRate)
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        if normalised.count < samples.count {
            normalised = [Float](repeating: 0, count: samples.count)
        }
        normalised.withUnsafeMutableBufferPointer { output in
            level.process(samples, into: output)
            accumulator.consume(UnsafeBufferPointer(rebasing: output[0..<samples.count]))
        }
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

extension DetectorOutput {
    /// The output of a session whose tempo the shared windowed vote decided.
    init(voted result: TempoVote.Result) {
        self.init(
            bpm: result.bpm, reason: result.reason, confidence: result.confidence,
            candidates: result.candidates.map { TempoCandidate(bpm: $0.bpm, strength: $0.strength) },
            windows: result.windows.map {
                AnalysisWindow(
                    startS: $0.startSeconds, durationS: $0.durationSeconds, energy: $0.energy,
                    bpm: $0.bpm, strength: $0.strength)
            })
    }
}
