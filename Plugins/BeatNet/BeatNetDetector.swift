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
/// P(no beat). The beat activation (P(beat) + P(downbeat)) is the envelope of the windowed
/// vote: each window's generalised autocorrelation is read at every tempo of the grid and the
/// metrical decision picks the beat, as the autocorrelation detector does on its onset
/// signal.
///
/// Unlike BeatNet itself, the level is normalised first (`level_dbfs`): the network's log
/// spectrogram depends on the level, and it was trained on mastered music.
public struct BeatNetDetector: TempoDetector {
    static let name = "beatnet"

    /// The sample rate BeatNet's features and network expect: the session resamples to it.
    public static let sampleRate = 22_050.0

    public static let descriptor = DetectorDescriptor(
        name: name,
        version: "1.1.2",
        summary: "Learned beat activation: BeatNet's CRNN run in Swift on its log filtered spectrogram, then the generalised autocorrelation of the activation and a metrical decision. Weights: BeatNet model 1 by M. Heydari, F. Cwitkowitz and Z. Duan (ISMIR 2021), from PyPI BeatNet 1.1.3, licence CC BY 4.0, embedded in the binary",
        presets: [],
        specific: [
            ParameterSpec(
                "level_dbfs", .number(-60...0), default: .number(-14),
                summary: "the song is scaled to this RMS level (dBFS) before the features: the network was trained on mastered music and its log spectrogram depends on the level"),
            ParameterSpec(
                "spectral_exponent", .number(0.1...2), default: .number(0.5),
                summary: "k of the generalised autocorrelation of the beat activation, the inverse transform of |X|^k (2: the ordinary one)"),
        ] + TempoVote.windowParameters()
            + TempoVote.metricalParameters(
                MetricalDecision(groupingWeight: 0.5, subdivisionWeight: 1, priorBPM: 160, priorOctaves: 1)),
        analysisSampleRate: sampleRate,
        // Not in the consensus: with it voting, Acc1 fell from 92.5 % to 90.0 % on the dev
        // corpus and stayed 92.6 % on the real one (tactus-bench accuracy).
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
