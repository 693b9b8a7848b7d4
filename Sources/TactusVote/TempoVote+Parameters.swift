import TactusDetector

/// The parameters of the windowed vote and the metrical decision, declared once for the
/// detectors that use them; each detector gives its own defaults, since each measures its
/// evidence on its own scale.
extension TempoVote {
    /// `window_s` and `hop_s`: the analysis windows.
    public static func windowParameters(windowSeconds: Double = 12, hopSeconds: Double = 3) -> [ParameterSpec] {
        [
            ParameterSpec(
                "window_s", .number(2...60), default: .number(windowSeconds),
                summary: "analysis window length in seconds (classic: only for the per-window record)"),
            ParameterSpec(
                "hop_s", .number(0.5...60), default: .number(hopSeconds),
                summary: "seconds between the starts of consecutive windows"),
        ]
    }

    /// `grouping_weight`, `subdivision_weight`, `prior_bpm` and `prior_octaves`: the
    /// ``MetricalDecision`` with this detector's defaults.
    public static func metricalParameters(_ defaults: MetricalDecision) -> [ParameterSpec] {
        [
            ParameterSpec(
                "grouping_weight", .number(0...4), default: .number(defaults.groupingWeight),
                summary: "default: weight of the periodicity at half and a third of a candidate tempo (bars) in the metrical decision"),
            ParameterSpec(
                "subdivision_weight", .number(0...4), default: .number(defaults.subdivisionWeight),
                summary: "default: weight of the periodicity at two and three times a candidate tempo (eighths, triplets) in the metrical decision"),
            ParameterSpec(
                "prior_bpm", .number(40...300), default: .number(defaults.priorBPM),
                summary: "default: centre of the wide log-normal tempo prior that breaks near-ties the evidence leaves"),
            ParameterSpec(
                "prior_octaves", .number(0...4), default: .number(defaults.priorOctaves),
                summary: "default: width of the tempo prior in octaves (0: no prior)"),
        ]
    }

    /// Refuses a hop longer than the window: every part of the song must belong to a window.
    public static func checkWindows(_ parameters: ParameterSet, detector: String) throws(ParameterError) {
        if parameters.number("hop_s") > parameters.number("window_s") {
            throw .inconsistent(
                detector: detector, parameters: ["hop_s", "window_s"],
                message: "hop_s must not exceed window_s (every part of the song belongs to a window)")
        }
    }
}

extension TempoVoteConfiguration {
    /// The configuration a detector's resolved parameters give: `window_s`, `hop_s`, `min_bpm`,
    /// `max_bpm` and the metrical decision's four parameters.
    public init(_ parameters: ParameterSet) {
        self.init(
            windowSeconds: parameters.number("window_s"), hopSeconds: parameters.number("hop_s"),
            minBPM: parameters.number("min_bpm"), maxBPM: parameters.number("max_bpm"),
            metrical: MetricalDecision(
                groupingWeight: parameters.number("grouping_weight"),
                subdivisionWeight: parameters.number("subdivision_weight"),
                priorBPM: parameters.number("prior_bpm"), priorOctaves: parameters.number("prior_octaves")))
    }
}
