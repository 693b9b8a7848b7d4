import TactusDetector
import TactusDSP
import TactusVote

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
/// - `windowed` (preset `default`): a bank of *resonating* combs (Scheirer 1998; Klapuri,
///   Eronen & Astola 2006) on the song's band envelopes. Six bands (kick and bass, low mids,
///   mids, presence, hi-hats, air) each give an onset envelope at `envelope_hz` (log-compressed
///   band magnitude, differenced, half-wave rectified). A resonator y[n] = a y[n - T] +
///   (1 - a) x[n] with a half-energy time of `resonator_half_life_s` seconds, a = 0.5^(T / half
///   life), has an output energy proportional to R(0) + 2 sum over m of a^m R(m T), R the
///   band's autocorrelation: so each window's resonance at every tempo of the grid is read
///   from one autocorrelation per band, over `resonator_periods` periods, normalised by R(0),
///   and summed over the bands. The metrical decision takes its grouping evidence (bars) from
///   the bands below `grouping_below_hz` (kick and bass) and its subdivision evidence
///   (eighths) from the bands above `subdivision_above_hz` (hi-hats, cymbals).
public struct CombFilterDetector: TempoDetector {
    public static let descriptor = DetectorDescriptor(
        name: "comb-filter",
        version: "2.2.0",
        summary: "Resonating comb filters on six band envelopes (Scheirer 1998; Klapuri et al. 2006); bars from kick and bass, subdivisions from the hi-hats",
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
                "pulses", .integer(2...8), default: .number(3),
                summary: "excerpt analysis: unit pulses per comb filter"),
            ParameterSpec(
                "excerpt_samples", .integer(16_384...1_048_576), default: .number(131_072),
                summary: "excerpt analysis: excerpt length in samples at 44.1 kHz (scaled to the song's rate)"),
            ParameterSpec(
                "smoothing_s", .number(0.01...2), default: .number(0.4),
                summary: "excerpt analysis: length of the half-Hann smoothing window, in seconds"),
            ParameterSpec(
                "envelope_hz", .number(50...500), default: .number(100),
                summary: "windowed analysis: onset envelope rate in Hz"),
            ParameterSpec(
                "compression", .number(0...100_000), default: .number(100),
                summary: "windowed analysis: loudness compression log(1 + c * magnitude / song's mean magnitude); 0 = linear"),
            ParameterSpec(
                "resonator_half_life_s", .number(0.2...10), default: .number(1.5),
                summary: "windowed analysis: seconds after which a resonator's response has lost half its energy"),
            ParameterSpec(
                "resonator_periods", .integer(2...16), default: .number(8),
                summary: "windowed analysis: beat periods of the autocorrelation each resonator's energy is read over"),
            ParameterSpec(
                "grouping_below_hz", .number(0...24_000), default: .number(400),
                summary: "windowed analysis: bands ending at or below this give the metrical decision its grouping (bar) evidence"),
            ParameterSpec(
                "subdivision_above_hz", .number(0...24_000), default: .number(2_500),
                summary: "windowed analysis: bands starting at or above this give the metrical decision its subdivision evidence"),
        ] + TempoVote.windowParameters()
            // The prior is wide and centred above the range: it prefers the double of a tempo near
            // 90 BPM as much as the former (160 BPM, 1.5 octaves) did, but its preference changes
            // 36 % less with tempo, so a song slowed or sped up by a few per cent keeps its level
            // (issue 29; `tactus-bench stretch-invariance`).
            + TempoVote.metricalParameters(
                MetricalDecision(groupingWeight: 0.75, subdivisionWeight: 1, priorBPM: 182, priorOctaves: 1.875)))

    public let parameters: ParameterSet

    public init(parameters: ParameterSet) throws(ParameterError) {
        try TempoVote.checkWindows(parameters, detector: Self.descriptor.name)
        let window = parameters.number("window_s")
        let longestBeat = 60 / parameters.number("min_bpm")
        if parameters.text("analysis") == "windowed", window < 2 * longestBeat {
            throw .inconsistent(
                detector: Self.descriptor.name, parameters: ["window_s", "min_bpm"],
                message: "window_s must hold at least two beats at min_bpm (\(2 * longestBeat) s)")
        }
        self.parameters = parameters
    }

    public func makeSession(format: SignalFormat) -> any DetectorSession {
        makeSession(format: format, frontEnds: SharedFrontEnds())
    }

    /// The windowed analysis takes its spectrogram from `frontEnds` (shared with the other
    /// detectors of the song that use the same frames).
    public func makeSession(format: SignalFormat, frontEnds: SharedFrontEnds) -> any DetectorSession {
        switch parameters.text("analysis") {
        case "excerpt": return ExcerptCombFilterSession(parameters: parameters, format: format)
        default: return WindowedCombFilterSession(parameters: parameters, format: format, frontEnds: frontEnds)
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
