/// The tempo several detectors agree on for one song.
public struct ConsensusTempo: Sendable, Hashable, Codable {
    /// The consensus tempo, or nil when no detector found one.
    public var bpm: Double?
    /// The detectors whose own tempo is within 4 % of `bpm`, sorted by name.
    public var detectors: [String]

    public init(bpm: Double?, detectors: [String]) {
        self.bpm = bpm
        self.detectors = detectors
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(detectors, forKey: .detectors)
    }
}

/// Octave-aware agreement between detectors, weighted by their confidence.
public enum Consensus {
    /// The consensus of the analyses of one song.
    ///
    /// Every detector's tempo is a hypothesis. A hypothesis is supported by each analysis in
    /// proportion to its confidence times the strength of its candidate at that tempo (its
    /// best candidate has strength 1; octave-related candidates count with their own
    /// strengths), so a detector that reported 70 BPM with a strong 140 BPM candidate still
    /// supports 140. The best-supported hypothesis wins; the consensus tempo is the
    /// confidence-weighted mean of the detector tempi within 4 % of it.
    public static func of(_ analyses: [TempoAnalysis], tolerance: Double = TempoRelation.defaultTolerance) -> ConsensusTempo {
        let found = analyses.filter { $0.bpm != nil }
        guard !found.isEmpty else { return ConsensusTempo(bpm: nil, detectors: []) }

        func support(of hypothesis: Double, by analysis: TempoAnalysis) -> Double {
            let weight = max(analysis.confidence, 1e-3)
            if let bpm = analysis.bpm, TempoRelation.matches(bpm, hypothesis, tolerance: tolerance) {
                return weight
            }
            let strength = analysis.candidates
                .filter { TempoRelation.matches($0.bpm, hypothesis, tolerance: tolerance) }
                .map(\.strength).max() ?? 0
            return weight * min(max(strength, 0), 1)
        }

        var best: (bpm: Double, score: Double, agreeing: [TempoAnalysis])?
        for hypothesis in found.compactMap(\.bpm) {
            let score = found.reduce(0) { $0 + support(of: hypothesis, by: $1) }
            let agreeing = found.filter { TempoRelation.matches($0.bpm!, hypothesis, tolerance: tolerance) }
            if best == nil || score > best!.score + 1e-9 {
                best = (hypothesis, score, agreeing)
            }
        }
        guard let winner = best else { return ConsensusTempo(bpm: nil, detectors: []) }
        let weights = winner.agreeing.map { max($0.confidence, 1e-3) }
        let mean = zip(winner.agreeing, weights).reduce(0) { $0 + $1.0.bpm! * $1.1 } / weights.reduce(0, +)
        return ConsensusTempo(bpm: mean, detectors: Array(Set(winner.agreeing.map(\.detector))).sorted())
    }
}
