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
            compression: parameters.number("compression"), minimumRise: parameters.number("minimum_rise"))
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
/// log-compressed spectral flux over twelfth-octave bands, summed and smoothed), its
/// generalised autocorrelation (|X|^0.5) in windows, and the metrical decision on the song's
/// mean autocorrelation.
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
        let bands = accumulator.finish()
        let envelope = bands.replacingBands([Self.smoothed(Self.summed(bands.bands), frames: settings.smoothingFrames)])
        let autocorrelation = EnvelopeAutocorrelation(spectralExponent: settings.spectralExponent)
        let vote = TempoVote(configuration: settings.vote)
        let beatIndices = vote.grid.indices(within: settings.vote.minBPM...settings.vote.maxBPM)
        return vote.decide(envelope) { window, grid in
            let r = autocorrelation.of(window.bands[0])
            guard r[0] > 0 else { return .none(count: grid.count) }
            let zeroLag = Double(r[0])
            let curve = grid.bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / zeroLag }
            guard let best = beatIndices.max(by: { curve[$0] < curve[$1] }) else { return .none(count: grid.count) }
            let strength = Self.correlation(window.bands[0], atLag: window.lag(ofBPM: grid.bpms[best]))
            return PeriodicityEvidence(strength: strength, curve: curve)
        }
    }

    /// The ordinary normalised autocorrelation of `values` (mean removed) at one fractional
    /// lag: how periodic the window is at its best period, on the same 0...1 scale for every
    /// detector (the generalised autocorrelation's own values are flatter).
    private static func correlation(_ values: ArraySlice<Float>, atLag lag: Double) -> Double {
        let count = values.count
        let whole = Int(lag), fraction = lag - Double(whole)
        guard whole + 1 < count else { return 0 }
        let mean = Double(values.reduce(0, +)) / Double(count)
        let start = values.startIndex
        var energy = 0.0, atWhole = 0.0, atNext = 0.0
        for index in 0..<count {
            let value = Double(values[start + index]) - mean
            energy += value * value
            if index + whole < count { atWhole += value * (Double(values[start + index + whole]) - mean) }
            if index + whole + 1 < count { atNext += value * (Double(values[start + index + whole + 1]) - mean) }
        }
        guard energy > 0 else { return 0 }
        return ((1 - fraction) * atWhole + fraction * atNext) / energy
    }

    /// The onset-strength signal: the sum over bands of each band's flux.
    private static func summed(_ bands: [[Float]]) -> [Float] {
        guard var total = bands.first else { return [] }
        for band in bands.dropFirst() {
            for index in total.indices { total[index] += band[index] }
        }
        return total
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
