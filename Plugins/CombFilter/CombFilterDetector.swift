import TactusDetector
import TactusDSP

/// Scheirer's comb-filter tempo detector (`comb-filter`), as both source documents use it.
///
/// The signal is split into frequency bands; each band's onset envelope (rectified, smoothed,
/// differenced, half-wave rectified) is fed to a bank of comb filters, one per candidate tempo,
/// and the tempo whose combs ring with the most energy wins. A comb of `pulses` unit pulses
/// `N` samples apart applied to a signal x has output energy
/// `pulses * R(0) + 2 * sum over k of (pulses - k) * R(k N)`, where R is x's autocorrelation
/// (for 3 pulses: 3R(0) + 4R(N) + 2R(2N)); so every candidate is scored from one
/// autocorrelation per band (fractional N by interpolation) instead of one FFT per candidate.
///
/// Two analyses:
/// - `excerpt` (preset `classic`): the source documents' configuration: one excerpt of 2^17
///   samples at 44.1 kHz from the middle of the song (the same duration at other rates),
///   brick-wall FFT bands (seed 000's 0-1k-2k-4k-8k-16k-22.05k Hz), full-wave rectification,
///   0.4 s half-Hann smoothing, diff-rect, 3-pulse combs, coarse-to-fine search in steps of 2,
///   0.5, 0.1 and 0.01 BPM (without seed 000's truncation of each step to a whole BPM).
/// - `windowed` (preset `default`): the whole song as a band-wise onset-strength envelope at
///   `envelope_hz`, cut into `window_s` windows every `hop_s`; each window is scored by the comb
///   energies (from its band autocorrelations) over a fine log-spaced tempo grid, and the
///   windows vote (``TempoVote``) with a tempo prior deciding between octaves.
public struct CombFilterDetector: TempoDetector {
    public static let descriptor = DetectorDescriptor(
        name: "comb-filter",
        version: "1.0.0",
        summary: "Scheirer's comb-filter bank on band-wise onset envelopes (Music Runner, MoovMe)",
        specific: [
            ParameterSpec(
                "analysis", .choice(["windowed", "excerpt"]), default: .text("windowed"),
                presets: ["classic": .text("excerpt")],
                summary: "windowed: the whole song in overlapping windows that vote; excerpt: one excerpt from the middle"),
            ParameterSpec(
                "band_edges_hz", .increasingNumbers(range: 0...96_000, count: 2...13),
                default: .numbers([0, 150, 400, 1_000, 2_500, 6_000, 11_000]),
                presets: ["classic": .numbers([0, 1_000, 2_000, 4_000, 8_000, 16_000, 22_050])],
                summary: "edges of the frequency bands in Hz (n + 1 edges make n bands)"),
            ParameterSpec(
                "pulses", .integer(2...8), default: .number(5), presets: ["classic": .number(3)],
                summary: "unit pulses per comb filter"),
            ParameterSpec(
                "excerpt_samples", .integer(16_384...1_048_576), default: .number(131_072),
                summary: "excerpt analysis: excerpt length in samples at 44.1 kHz (scaled to the song's rate)"),
            ParameterSpec(
                "smoothing_s", .number(0.01...2), default: .number(0.4),
                summary: "excerpt analysis: length of the half-Hann smoothing window, in seconds"),
            ParameterSpec(
                "window_s", .number(2...60), default: .number(8),
                summary: "windowed analysis: window length in seconds"),
            ParameterSpec(
                "hop_s", .number(0.5...60), default: .number(4),
                summary: "windowed analysis: seconds between window starts"),
            ParameterSpec(
                "envelope_hz", .number(50...500), default: .number(100),
                summary: "windowed analysis: onset envelope rate in Hz"),
            ParameterSpec(
                "compression", .number(0...100_000), default: .number(100),
                summary: "windowed analysis: loudness compression log(1 + c * magnitude / song's mean magnitude); 0 = linear"),
            ParameterSpec(
                "prior_bpm", .number(40...300), default: .number(110),
                summary: "windowed analysis: centre of the log-normal tempo prior that decides between octaves"),
            ParameterSpec(
                "prior_octaves", .number(0...4), default: .number(0.8),
                summary: "windowed analysis: width of the tempo prior in octaves (0: no prior)"),
        ])

    public let parameters: ParameterSet

    public init(parameters: ParameterSet) throws(ParameterError) {
        let hop = parameters.number("hop_s"), window = parameters.number("window_s")
        if hop > window {
            throw .inconsistent(
                detector: Self.descriptor.name, parameters: ["hop_s", "window_s"],
                message: "hop_s must not exceed window_s (windows would leave gaps)")
        }
        let longestBeat = 60 / parameters.number("min_bpm")
        if parameters.text("analysis") == "windowed", window < 2 * longestBeat {
            throw .inconsistent(
                detector: Self.descriptor.name, parameters: ["window_s", "min_bpm"],
                message: "window_s must hold at least two beats at min_bpm (\(2 * longestBeat) s)")
        }
        self.parameters = parameters
    }

    public func makeSession(format: SignalFormat) -> any DetectorSession {
        switch parameters.text("analysis") {
        case "excerpt": return ExcerptCombFilterSession(parameters: parameters, format: format)
        default: return WindowedCombFilterSession(parameters: parameters, format: format)
        }
    }
}

/// The comb-filter energy of one band set, from its autocorrelation.
enum CombEnergy {
    /// Weight of R(k N) in a comb of `pulses` pulses: 2 (pulses - k), for k = 1 ..< pulses.
    static func weights(pulses: Int) -> [Double] {
        (1..<pulses).map { 2 * Double(pulses - $0) }
    }

    /// The comb's output energy above its lag-0 part, `2 * sum (pulses - k) R(k N)`, for a beat
    /// lag of `lag` samples (fractional: R is interpolated).
    static func excess(_ autocorrelation: [Float], lag: Double, weights: [Double]) -> Double {
        var total = 0.0
        for (index, weight) in weights.enumerated() {
            total += weight * EnvelopeAutocorrelation.value(autocorrelation, atLag: lag * Double(index + 1))
        }
        return total
    }
}
