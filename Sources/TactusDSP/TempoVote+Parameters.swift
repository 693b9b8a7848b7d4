import TactusDetector

/// The parameters of the windowed vote, declared once for the detectors that use it.
extension TempoVote {
    /// `window_s` and `hop_s`: the analysis windows.
    public static let windowParameters: [ParameterSpec] = [
        ParameterSpec(
            "window_s", .number(2...60), default: .number(8),
            summary: "analysis window length in seconds (classic: only for the per-window record)"),
        ParameterSpec(
            "hop_s", .number(0.5...60), default: .number(4),
            summary: "seconds between the starts of consecutive windows"),
    ]

    /// `prior_bpm` and `prior_octaves`: the tempo prior that decides between octaves.
    public static let priorParameters: [ParameterSpec] = [
        ParameterSpec(
            "prior_bpm", .number(40...300), default: .number(120),
            summary: "default: centre of the log-normal tempo prior that decides between octave-related tempi"),
        ParameterSpec(
            "prior_octaves", .number(0...4), default: .number(1),
            summary: "default: width of the tempo prior in octaves (0: no prior)"),
    ]

    /// Refuses a hop longer than the window: every part of the song must belong to a window.
    public static func checkWindows(_ parameters: ParameterSet, detector: String) throws(ParameterError) {
        if parameters.number("hop_s") > parameters.number("window_s") {
            throw .inconsistent(
                detector: detector, parameters: ["hop_s", "window_s"],
                message: "hop_s must not exceed window_s (every part of the song belongs to a window)")
        }
    }
}
