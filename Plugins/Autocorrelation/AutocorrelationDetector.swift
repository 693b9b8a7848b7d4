import TactusDSP
import TactusDetector

/// Tempo from the autocorrelation of an amplitude or onset envelope (seed 002 section 4.5,
/// the SoundTouch BPM detector; seed 000 sections 2.2 and 4.7).
///
/// - `classic` is SoundTouch's detector as seed 002 describes it: the audio is decimated to
///   about 500 Hz by averaging (magnitudes), enveloped (values under a sliding RMS average times a factor
///   are dropped, the rest smoothed), autocorrelated through the FFT after the whole track,
///   and the highest autocorrelation peak in the allowed lag range, refined by parabolic
///   interpolation (seed 000 shows why: the lag resolution is 60 f / (n^2 + n)), is the beat.
/// - `default` autocorrelates a band-wise onset-strength envelope (the shared
///   ``OnsetStrengthAccumulator``) in windows over the whole song; a tempo's salience in a
///   window is the autocorrelation at one to four beat periods (``BeatMultipleSalience``),
///   and the shared ``TempoVote`` decides the song's tempo from all windows with a tempo
///   prior for the octave.
public struct AutocorrelationDetector: TempoDetector {
    static let name = "autocorrelation"

    public static let descriptor = DetectorDescriptor(
        name: name,
        version: "1.0.0",
        summary: "Autocorrelation of the song's envelope: the lag at which the song best repeats is the beat",
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
                "band_edges_hz", .increasingNumbers(range: 0...24_000, count: 2...17),
                default: .numbers([0, 200, 400, 800, 1600, 3200, 6400, 16_000]),
                summary: "default: edges of the onset-envelope bands in Hz (n + 1 edges make n bands)"),
            ParameterSpec(
                "envelope_hz", .number(50...500), default: .number(100),
                summary: "default: onset-envelope values per second"),
            ParameterSpec(
                "compression", .number(0...100_000), default: .number(30),
                summary: "default: each band's magnitude m becomes log(1 + compression * m / M), M the song's mean magnitude, before differencing (0: linear)"),
            ParameterSpec(
                "minimum_rise", .number(0...10), default: .number(0.03),
                summary: "default: rises of a band's compressed level smaller than this are not onsets"),
            ParameterSpec(
                "beat_multiples", .integer(1...8), default: .number(4),
                summary: "default: a tempo's salience averages the envelope autocorrelation at this many multiples of its beat period"),
        ] + TempoVote.windowParameters + TempoVote.priorParameters)

    public let parameters: ParameterSet

    public init(parameters: ParameterSet) throws(ParameterError) {
        self.parameters = parameters
        try TempoVote.checkWindows(parameters, detector: Self.name)
    }

    public func makeSession(format: SignalFormat) -> any DetectorSession {
        switch parameters.text("preset") {
        case "classic":
            return DecimatedEnvelopeSession(settings: DecimatedEnvelopeSettings(parameters), sampleRate: format.sampleRate)
        default:
            return OnsetAutocorrelationSession(settings: OnsetAutocorrelationSettings(parameters), sampleRate: format.sampleRate)
        }
    }
}
