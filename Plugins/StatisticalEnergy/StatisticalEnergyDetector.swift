import TactusDSP
import TactusDetector
import TactusVote

/// Tempo from sound-energy statistics (Frederic Patin, "Beat Detection Algorithms", 2003;
/// seed 002 section 3.3).
///
/// Patin compares the instant energy of each block with the average energy of the blocks
/// before it: a block much louder than its recent past is a beat. Patin stops at beats;
/// a tempo needs one more step.
///
/// - `classic` is Patin's streaming detector as published: 1024-sample blocks (23.2 ms),
///   a 43-block history, the variance-adaptive constant C = -0.0025714 V + 1.5142857, hard
///   beat decisions debounced as seed 004 does, and the tempo from clustering the intervals
///   between beats.
/// - `default` keeps the statistic but makes it soft and frequency-selective: three
///   sub-bands (kick, body, cymbals) at a 5.8 ms hop, each block's energy against its own
///   history, the excess taken as a continuous beat strength instead of a yes/no decision;
///   the beats (local maxima of the strength) give a weighted histogram of the intervals
///   between them per window (Dixon's inter-onset intervals), and the metrical decision picks
///   the level whose bars and half bars recur and whose subdivisions the cymbal band plays.
public struct StatisticalEnergyDetector: TempoDetector {
    static let name = "statistical-energy"

    public static let descriptor = DetectorDescriptor(
        name: name,
        version: "2.2.0",
        summary: "Patin's sound-energy statistics: blocks louder than their recent past are beats; tempo from the intervals between beats and a metrical decision",
        specific: [
            ParameterSpec(
                "block_ms", .number(2...100), default: .number(5.8),
                presets: ["classic": .number(1024_000.0 / 44_100)],
                summary: "block length in milliseconds (Patin: 1024 samples at 44.1 kHz, 23.2 ms); scaled to every sample rate"),
            ParameterSpec(
                "history_blocks", .integer(2...400), default: .number(8),
                presets: ["classic": .number(43)],
                summary: "blocks in the local-average history each block is compared with (Patin: 43, about 1 s)"),
            ParameterSpec(
                "c_slope", .number(-1...1), default: .number(-0.0025714),
                summary: "slope of Patin's adaptive constant C = c_slope * V + c_intercept"),
            ParameterSpec(
                "c_intercept", .number(0.5...4), default: .number(1.5142857),
                summary: "intercept of Patin's adaptive constant C = c_slope * V + c_intercept"),
            ParameterSpec(
                "variance_scale", .number(0...10_000), default: .number(20),
                summary: "V is the variance of the history's energies relative to their squared mean, times this scale, so C does not depend on the signal's level"),
            ParameterSpec(
                "c_min", .number(0.5...4), default: .number(1.05),
                summary: "lowest value C may take however large the variance"),
            ParameterSpec(
                "hold_blocks", .integer(1...16), default: .number(1),
                summary: "classic: blocks the energy must stay above C * <E> before a beat is declared (seed 004's debounce)"),
            ParameterSpec(
                "refractory_s", .number(0...1), default: .number(0.15),
                summary: "classic: shortest time between two beats, in seconds"),
        ] + TempoVote.windowParameters() + [
            ParameterSpec(
                "band_split_hz", .increasingNumbers(range: 20...20_000, count: 2...2), default: .numbers([150, 3000]),
                summary: "default: crossover frequencies in Hz between the low, middle and high sub-bands"),
            ParameterSpec(
                "peak_ms", .number(5...500), default: .number(50),
                summary: "default: a beat is a block whose strength is the largest within this many milliseconds on either side"),
            ParameterSpec(
                "interval_smoothing", .number(0.001...0.2), default: .number(0.02),
                summary: "default: width of the interval histogram's smoothing, relative (0.02: 2 % of the tempo)"),
        ] + TempoVote.metricalParameters(
            // Wide and centred above the range: the former prior's (160 BPM, 0.8 octave) preference
            // for the double of a tempo near 90 BPM, changing 36 % less with tempo (issue 29).
            MetricalDecision(groupingWeight: 0.25, subdivisionWeight: 1, priorBPM: 182, priorOctaves: 1)))

    public let parameters: ParameterSet

    public init(parameters: ParameterSet) throws(ParameterError) {
        self.parameters = parameters
        try TempoVote.checkWindows(parameters, detector: Self.name)
    }

    public func makeSession(format: SignalFormat) -> any DetectorSession {
        switch parameters.text("preset") {
        case "classic":
            return PatinBeatSession(settings: PatinSettings(parameters), sampleRate: format.sampleRate)
        default:
            return EnergyStatisticsSession(settings: EnergyStatisticsSettings(parameters), format: format)
        }
    }
}
