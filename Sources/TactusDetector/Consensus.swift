/// The tempo several detectors agree on for one song.
public struct ConsensusTempo: Sendable, Hashable, Codable {
    /// The consensus tempo, or nil when no detector found one.
    public var bpm: Double?
    /// The detectors whose own tempo is within 4 % of `bpm`, sorted by name.
    public var detectors: [String]
    /// How strongly the detectors support `bpm`, in 0...1 (see ``Consensus/of(_:tolerance:)``);
    /// nil for a consensus a library stored before it recorded confidences.
    public var confidence: Double?
    /// Where the tempo holds and where it changes (``TempoMap``), from the voting detectors'
    /// windows; nil when they have none (or for a consensus stored before maps were made).
    public var tempoMap: TempoMap?

    public init(bpm: Double?, detectors: [String], confidence: Double? = nil, tempoMap: TempoMap? = nil) {
        self.bpm = bpm
        self.detectors = detectors
        self.confidence = confidence
        self.tempoMap = tempoMap
    }

    enum CodingKeys: String, CodingKey {
        case bpm, detectors, confidence, tempoMap = "tempo_map"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(detectors, forKey: .detectors)
        try container.encodeIfPresent(confidence, forKey: .confidence)
        try container.encodeIfPresent(tempoMap, forKey: .tempoMap)
    }
}

/// Octave- and 3:2-aware agreement between detectors' candidate lists, weighted by their
/// confidence.
public enum Consensus {
    /// How much a detector's candidate (rather than its own tempo) counts, at full strength.
    public static let candidateVote = 0.5

    /// The consensus of the analyses of one song.
    ///
    /// Every tempo a detector proposes, its own or one of its candidates (octave, 3:2 and other
    /// relatives included), is a hypothesis, and every detector votes on each hypothesis: a
    /// full vote when its own tempo is within `tolerance` of it, otherwise half a vote times
    /// the strength of its candidate there, and nothing if it has no such candidate. So a
    /// detector that reported 90 BPM with a strong 180 BPM candidate still half-supports 180,
    /// and two detectors that agree on 180 while the third says 120 win. Votes are weighted by
    /// (1 + confidence) / 2: confidence breaks ties, but never lets one detector outvote two
    /// that agree. The best-supported hypothesis wins; the consensus tempo is the
    /// confidence-weighted mean of the detector tempi within `tolerance` of it (the hypothesis
    /// itself when only candidates support it), those detectors are the ones that agree, and
    /// the confidence is the winner's support times the detectors' confidences, over the
    /// number of detectors that found a tempo (1: all agree, each fully confident). The tempo
    /// map (``TempoMap/of(_:consensus:advisory:settings:)``) comes from the same detectors' windows.
    ///
    /// The analyses of the `advisory` detectors (``DetectorDescriptor/advisory``) do not vote.
    public static func of(
        _ analyses: [TempoAnalysis], tolerance: Double = TempoRelation.defaultTolerance, advisory: Set<String> = []
    ) -> ConsensusTempo {
        let found = analyses.filter { $0.bpm != nil && !advisory.contains($0.detector) }
        guard !found.isEmpty else { return ConsensusTempo(bpm: nil, detectors: []) }

        func confidence(_ analysis: TempoAnalysis) -> Double { min(max(analysis.confidence, 0), 1) }
        /// The share of a full vote `analysis` gives `hypothesis`, before its confidence weight.
        func share(of hypothesis: Double, by analysis: TempoAnalysis) -> Double {
            if let bpm = analysis.bpm, TempoRelation.matches(bpm, hypothesis, tolerance: tolerance) { return 1 }
            let strength = analysis.candidates
                .filter { TempoRelation.matches($0.bpm, hypothesis, tolerance: tolerance) }
                .map(\.strength).max() ?? 0
            return candidateVote * min(max(strength, 0), 1)
        }

        let hypotheses = found.compactMap(\.bpm) + found.flatMap { $0.candidates.map(\.bpm) }
        var best: (hypothesis: Double, score: Double)?
        for hypothesis in hypotheses where hypothesis > 0 && hypothesis.isFinite {
            let score = found.reduce(0) { $0 + (1 + confidence($1)) / 2 * share(of: hypothesis, by: $1) }
            if best == nil || score > best!.score + 1e-9 {
                best = (hypothesis, score)
            }
        }
        guard let winner = best else { return ConsensusTempo(bpm: nil, detectors: []) }
        let agreeing = found.filter { TempoRelation.matches($0.bpm!, winner.hypothesis, tolerance: tolerance) }
        let support = found.reduce(0) { $0 + confidence($1) * share(of: winner.hypothesis, by: $1) } / Double(found.count)
        let bpm: Double
        if agreeing.isEmpty {
            bpm = winner.hypothesis
        } else {
            let weights = agreeing.map { max($0.confidence, 1e-3) }
            bpm = zip(agreeing, weights).reduce(0) { $0 + $1.0.bpm! * $1.1 } / weights.reduce(0, +)
        }
        return ConsensusTempo(
            bpm: bpm, detectors: Array(Set(agreeing.map(\.detector))).sorted(), confidence: min(max(support, 0), 1),
            tempoMap: TempoMap.of(analyses, consensus: bpm, advisory: advisory))
    }
}
