import Foundation
import TactusDSP
import TactusDetector
import TactusVote

/// The settings of the `default` autocorrelation analysis.
struct OnsetAutocorrelationSettings {
    var envelope: OnsetStrengthConfiguration
    var spectralExponent: Float
    var smoothingFrames: Int
    var vote: TempoVoteConfiguration

    init(_ parameters: ParameterSet) {
        envelope = OnsetStrengthConfiguration(
            bandEdgesHz: Self.bandEdges(perOctave: parameters.integer("bands_per_octave"), range: parameters.numbers("flux_range_hz")), frameRate: parameters.number("envelope_hz"),
            compression: parameters.number("compression"), minimumRise: parameters.number("minimum_rise"),
            averagesBands: true)
        spectralExponent = Float(parameters.number("spectral_exponent"))
        smoothingFrames = parameters.integer("smoothing_frames")
        vote = TempoVoteConfiguration(parameters)
    }

    /// 0 Hz, then `range[0]` Hz and every 1/`perOctave` octave above it up to `range[1]`.
    static func bandEdges(perOctave: Int, range: [Double]) -> [Double] {
        let octaves = log2(range[1] / range[0])
        let steps = max(1, Int((octaves * Double(perOctave)).rounded(.down)))
        return [0] + (0...steps).map { range[0] * pow(2, Double($0) / Double(perOctave)) }
    }
}

/// The `default` preset, after Percival & Tzanetakis (2014): one onset-strength signal (the
/// log-compressed spectral flux over eighth-octave bands, averaged and smoothed), its
/// generalised autocorrelation (|X|^0.5) in windows, and the metrical decision on the song's
/// mean autocorrelation.
final class OnsetAutocorrelationSession: DetectorSession {
    private let settings: OnsetAutocorrelationSettings
    private let accumulator: OnsetStrengthAccumulator
    private var finite: FiniteSamples

    init(settings: OnsetAutocorrelationSettings, format: SignalFormat, frontEnds: SharedFrontEnds) {
        self.settings = settings
        finite = FiniteSamples(format: format)
        accumulator = OnsetStrengthAccumulator(
            sampleRate: format.sampleRate, configuration: settings.envelope, frontEnds: frontEnds,
            expectedSamples: format.expectedFrames)
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { accumulator.consume($0) }
    }

    func finish() -> DetectorOutput {
        let flux = accumulator.finish()
        let envelope = flux.replacingBands([Self.smoothed(flux.bands[0], frames: settings.smoothingFrames)])
        let autocorrelation = EnvelopeAutocorrelation(spectralExponent: settings.spectralExponent)
        let ordinary = EnvelopeAutocorrelation()
        let vote = TempoVote(configuration: settings.vote)
        let beatIndices = vote.grid.indices(within: settings.vote.minBPM...settings.vote.maxBPM)
        return vote.decide(envelope) { window, grid in
            guard let read = GridAutocorrelation(
                window.bands[0], of: window, grid: grid, beatIndices: beatIndices, autocorrelation: autocorrelation)
            else { return .none(count: grid.count) }
            let contrast = PeriodicityContrast(of: window.bands[0], lags: read.candidateLags, autocorrelation: ordinary)
            return PeriodicityEvidence(strength: contrast.strength(atLag: read.bestLag), curve: read.curve)
        }
    }

    /// `values` convolved with a normalised Hann window of `frames` taps (centred), which
    /// keeps the flux's spikes from aliasing between lags.
    private static func smoothed(_ values: [Float], frames: Int) -> [Float] {
        guard frames > 1, values.count > 1 else { return values }
        let taps = (0..<frames).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0 + 1) / Double(frames + 1))) }
        let total = taps.reduce(0, +)
        let centre = frames / 2
        return values.indices.map { index in
            var sum: Float = 0
            for (tap, weight) in taps.enumerated() {
                let source = index + tap - centre
                if source >= 0 && source < values.count { sum += weight * values[source] }
            }
            return sum / total
        }
    }
}
