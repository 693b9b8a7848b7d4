import TactusDetector

/// What the song figure shows: a song's envelope and every detector's result, whatever
/// they were read from (a library, a server, an analysis run in process).
public struct SongPlot: Sendable, Hashable {
    /// One detector's (or preset's) result.
    public struct Trace: Sendable, Hashable {
        /// What the legend calls it: `comb-filter`, `comb-filter/classic`, with ` v2` added
        /// when two versions of one detector are shown.
        public var label: String
        public var bpm: Double?
        public var confidence: Double
        /// Strongest first, strengths relative to the best (1).
        public var candidates: [TempoCandidate]
        /// In time order.
        public var windows: [AnalysisWindow]
        /// The beats, for detectors that track them.
        public var beats: BeatPositions? = nil
    }

    /// The headline: `Artist – Title`, the title alone, or the file name.
    public var title: String
    /// A line under the title (file, duration, song id...).
    public var subtitle: String
    /// The length of the shared time axis, in seconds.
    public var durationS: Double
    public var envelope: EnergyEnvelope?
    public var traces: [Trace]
    public var consensusBPM: Double?
    /// The tempo a person asserted for the song, when known.
    public var referenceBPM: Double?
    /// Where the consensus' tempo holds and changes, drawn over the per-window tempi.
    public var tempoMap: TempoMap?
    /// The song's constant beat grid, drawn as ticks under the tracked beats.
    public var beatGrid: BeatGrid?

    /// A plot of `analyses` (in the order given). `durationS` may be nil: the time axis
    /// then ends with the envelope or the last window.
    public init(
        title: String, subtitle: String, durationS: Double?, envelope: EnergyEnvelope?, analyses: [TempoAnalysis],
        consensusBPM: Double?, referenceBPM: Double? = nil, tempoMap: TempoMap? = nil, beatGrid: BeatGrid? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.envelope = envelope
        self.consensusBPM = consensusBPM
        self.referenceBPM = referenceBPM
        self.tempoMap = tempoMap
        self.beatGrid = beatGrid
        let labels = analyses.map(Self.label)
        traces = zip(analyses, labels).map { analysis, label in
            let shared = labels.filter { $0 == label }.count > 1
            return Trace(
                label: shared ? "\(label) v\(analysis.version)" : label, bpm: analysis.bpm, confidence: analysis.confidence,
                candidates: analysis.candidates, windows: analysis.windows, beats: analysis.beats)
        }
        let envelopeEnd = envelope.map { Double($0.values.count) * $0.hopS } ?? 0
        let windowsEnd = analyses.flatMap(\.windows).map { $0.startS + $0.durationS }.max() ?? 0
        let known = durationS.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.durationS = known ?? max(envelopeEnd, windowsEnd, 1)
    }

    /// `Artist – Title` when both are known, the title alone, else `file`.
    public static func title(title: String?, artist: String?, file: String) -> String {
        switch (title?.isEmpty == false ? title : nil, artist?.isEmpty == false ? artist : nil) {
        case (let title?, let artist?): return "\(artist) – \(title)"
        case (let title?, nil): return title
        default: return file
        }
    }

    /// `detector`, or `detector/preset` unless the preset is the default one.
    static func label(_ analysis: TempoAnalysis) -> String {
        if case .text(let preset)? = analysis.params["preset"], preset != "default" {
            return "\(analysis.detector)/\(preset)"
        }
        return analysis.detector
    }
}
