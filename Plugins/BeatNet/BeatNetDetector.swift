import TactusDSP
import TactusDetector
import TactusVote

/// Tempo from a learned beat activation: BeatNet's convolutional-recurrent network (Heydari,
/// Cwitkowitz & Duan, ISMIR 2021; weights CC BY 4.0, model 1) run in Swift.
///
/// The song is resampled to 22,050 Hz mono (the rate the network was trained at, declared as
/// the descriptor's `analysisSampleRate`: libsoxr through the song's shared front ends), turned into
/// BeatNet's features (a log-frequency filtered spectrogram, 24 bands per octave from 30 Hz to
/// 17 kHz, 50 frames per second, and its positive difference, exactly as BeatNet's madmom
/// pipeline computes them), and the network gives each frame P(beat), P(downbeat) and
/// P(no beat). The tempo comes from the beat activation (P(beat) + P(downbeat)), with the
/// spectral flux of the network's input added, through a bank of resonating comb filters
/// (Böck, Krebs & Widmer, ISMIR 2015), the beats from a hidden
/// Markov model of tempo and position within the beat decoded by Viterbi (Krebs, Böck &
/// Widmer, ISMIR 2015), the downbeats from P(downbeat) at the beats.
///
/// Unlike BeatNet itself, the level is normalised first (`level_dbfs`): the network's log
/// spectrogram depends on the level, and it was trained on mastered music.
public struct BeatNetDetector: TempoDetector {
    static let name = "beatnet"

    /// The sample rate BeatNet's features and network expect: the session resamples to it.
    public static let sampleRate = 22_050.0

    public static let descriptor = DetectorDescriptor(
        name: name,
        version: "1.5.0",
        summary: "Learned beat activation: BeatNet's CRNN run in Swift on its log filtered spectrogram, then resonating comb filters on the activation (with the spectral flux of its input added) for the tempo and a tempo-and-position hidden Markov model (Viterbi) for the beats, tracked again at the voting detectors' consensus tempo when that is another. Weights: BeatNet model 1 by M. Heydari, F. Cwitkowitz and Z. Duan (ISMIR 2021), from PyPI BeatNet 1.1.3, licence CC BY 4.0, embedded in the binary",
        presets: [],
        specific: [
            ParameterSpec(
                "level_dbfs", .number(-60...0), default: .number(-14),
                summary: "the song is scaled to this RMS level (dBFS) before the features: the network was trained on mastered music and its log spectrogram depends on the level"),
            ParameterSpec(
                "comb_alpha", .number(0.5...0.99), default: .number(0.79),
                summary: "feedback gain of the resonating comb filters on the beat activation (0.79 in Böck, Krebs and Widmer 2015)"),
            ParameterSpec(
                "onset_weight", .number(0...4), default: .number(1),
                summary: "weight of the spectral flux of the network's input, scaled to peak at 1, added to the beat activation that the comb filters read, and (as their weighted mean) that the beat tracker reads (0: the activation alone)"),
            ParameterSpec(
                "histogram_smoothing", .integer(1...31), default: .number(7),
                summary: "width, in delay bins of 5 ms, of the Hann window smoothing the histogram of the strongest comb filters"),
            ParameterSpec(
                "tracking_range", .number(0.05...1), default: .number(0.3),
                summary: "the beat tracker follows tempi from tempo / (1 + r) to tempo * (1 + r) around the song's tempo"),
            ParameterSpec(
                "transition_lambda", .number(1...10_000), default: .number(1_000),
                summary: "how strongly the beat tracker keeps its tempo from one beat to the next (tempo change probability exp(-lambda |ratio - 1|))"),
            ParameterSpec(
                "observation_lambda", .number(2...64), default: .number(16),
                summary: "the beat tracker's beat region is the first 1/lambda of each beat"),
        ] + TempoVote.windowParameters()
            + TempoVote.metricalParameters(
                MetricalDecision(groupingWeight: 0.5, subdivisionWeight: 1, priorBPM: 160, priorOctaves: 1)),
        analysisSampleRate: sampleRate,
        // Not in the consensus: with beatnet 1.2.0 voting, Acc1 rose from 92.6 % to 96.3 % on
        // the real corpus but fell from 92.5 % to 90.0 % on the dev one (tactus-bench accuracy).
        advisory: true)

    public let parameters: ParameterSet

    public init(parameters: ParameterSet) throws(ParameterError) {
        self.parameters = parameters
        try TempoVote.checkWindows(parameters, detector: Self.name)
    }

    public func makeSession(format: SignalFormat) -> any DetectorSession {
        makeSession(format: format, frontEnds: SharedFrontEnds())
    }

    /// The song resampled to 22,050 Hz comes from `frontEnds`, shared with any other detector
    /// working at that rate.
    public func makeSession(format: SignalFormat, frontEnds: SharedFrontEnds) -> any DetectorSession {
        BeatNetSession(settings: BeatNetSettings(parameters), format: format, frontEnds: frontEnds)
    }
}
