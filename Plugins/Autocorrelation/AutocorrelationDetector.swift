import TactusDSP
import TactusDetector
import TactusVote

/// Tempo from the autocorrelation of an amplitude or onset envelope (seed 002 section 4.5,
/// the SoundTouch BPM detector; seed 000 sections 2.2 and 4.7).
///
/// - `classic` is SoundTouch's detector as seed 002 describes it: the audio is decimated to
///   about 500 Hz by averaging (magnitudes), enveloped (values under a sliding RMS average times a factor
///   are dropped, the rest smoothed), autocorrelated through the FFT after the whole track,
///   and the highest autocorrelation peak in the allowed lag range, refined by parabolic
///   interpolation (seed 000 shows why: the lag resolution is 60 f / (n^2 + n)), is the beat.
/// - `default` follows Percival & Tzanetakis (2014): the onset-strength signal is the
///   log-compressed spectral flux over eighth-octave bands (log(1 + c * magnitude / M),
///   differenced, half-wave rectified, summed over the bands and smoothed); each window's
///   *generalised* autocorrelation (the inverse transform of |X|^0.5, which sharpens the
///   peaks) is normalised by its value at lag 0 and read at every tempo of the vote's grid; the
///   song's mean autocorrelation goes through the metrical decision, which prefers the level
///   whose half (bars) and double (eighths) are periodic too, so the dotted and octave levels
///   that an autocorrelation also shows lose.
public struct AutocorrelationDetector: TempoDetector {
    static let name = "autocorrelation"

    public static let descriptor = DetectorDescriptor(
        name: name,
        version: "2.1.0",
        summary: "Generalised autocorrelation of the spectral-flux onset signal (Percival & Tzanetakis 2014): the lag at which the song best repeats, then a metrical decision",
        specific: [
            ParameterSpec(
                "decimated_hz", .number(100...2000), default: .number(500),
                summary: "classic: rate the audio is decimated to (by averaging sample magnitudes) before enveloping"),
            ParameterSpec(
                "cutoff_factor", .number(0...10), default: .number(0.5),
                summary: "classic: envelope values below this factor times the sliding RMS average are dropped"),
            ParameterSpec(
                "average_s", .number(0.1...60), default: .number(14),
                summary: "classic: time constant of the sliding RMS average, in seconds"),
            ParameterSpec(
                "smoothing_ms", .number(0...200), default: .number(5.6),
                summary: "classic: time constant of the envelope's smoothing, in milliseconds"),
            ParameterSpec(
                "bands_per_octave", .integer(1...24), default: .number(8),
                summary: "default: spectral-flux bands per octave over flux_range_hz (plus one band below it)"),
            ParameterSpec(
                "flux_range_hz", .increasingNumbers(range: 10...24_000, count: 2...2), default: .numbers([30, 16_000]),
                summary: "default: lowest and highest edge of the spectral-flux bands in Hz"),
            ParameterSpec(
                "envelope_hz", .number(50...500), default: .number(100),
                summary: "default: onset-strength values per second"),
            ParameterSpec(
                "compression", .number(0...100_000), default: .number(1000),
                summary: "default: each band's magnitude m becomes log(1 + compression * m / M), M the song's mean magnitude, before differencing (0: linear)"),
            ParameterSpec(
                "minimum_rise", .number(0...10), default: .number(0.03),
                summary: "default: rises of a band's compressed level smaller than this are not onsets"),
            ParameterSpec(
                "smoothing_frames", .integer(1...15), default: .number(5),
                summary: "default: length of the Hann window smoothing the onset-strength signal, in frames (1: none)"),
            ParameterSpec(
                "spectral_exponent", .number(0.1...2), default: .number(0.5),
                summary: "default: k of the generalised autocorrelation, the inverse transform of |X|^k (2: the ordinary one)"),
        ] + TempoVote.windowParameters()
            + TempoVote.metricalParameters(
                MetricalDecision(groupingWeight: 0.5, subdivisionWeight: 1, priorBPM: 160, priorOctaves: 1)))

    public let parameters: ParameterSet

    public init(parameters: ParameterSet) throws(ParameterError) {
        self.parameters = parameters
        try TempoVote.checkWindows(parameters, detector: Self.name)
    }

    public func makeSession(format: SignalFormat) -> any DetectorSession {
        makeSession(format: format, frontEnds: SharedFrontEnds())
    }

    /// The default analysis takes its spectrogram from `frontEnds` (shared with the other
    /// detectors of the song that use the same frames).
    public func makeSession(format: SignalFormat, frontEnds: SharedFrontEnds) -> any DetectorSession {
        switch parameters.text("preset") {
        case "classic":
            return DecimatedEnvelopeSession(settings: DecimatedEnvelopeSettings(parameters), sampleRate: format.sampleRate)
        default:
            return OnsetAutocorrelationSession(
                settings: OnsetAutocorrelationSettings(parameters), format: format, frontEnds: frontEnds)
        }
    }
}
