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
    /// How much an octave-related candidate (rather than the detector's own tempo) counts,
    /// at full strength.
    public static let candidateVote = 0.5

    /// The consensus of the analyses of one song.
    ///
    /// Every detector's tempo is a hypothesis, and every detector votes on each hypothesis:
    /// a full vote when its own tempo is within `tolerance` of it, otherwise half a vote times
    /// the strength of its candidate at that tempo (so a detector that reported 70 BPM with a
    /// strong 140 BPM candidate still half-supports 140), and nothing if it has no such
    /// candidate. Votes are weighted by (1 + confidence) / 2: confidence breaks ties between
    /// octaves, but detectors define their confidence on different scales, so it never lets
    /// one detector outvote two that agree. The best-supported hypothesis wins; the
    /// consensus tempo is the confidence-weighted mean of the detector tempi within
    /// `tolerance` of it, and those detectors are the ones that agree.
    public static func of(_ analyses: [TempoAnalysis], tolerance: Double = TempoRelation.defaultTolerance) -> ConsensusTempo {
        let found = analyses.filter { $0.bpm != nil }
        guard !found.isEmpty else { return ConsensusTempo(bpm: nil, detectors: []) }

        func vote(for hypothesis: Double, by analysis: TempoAnalysis) -> Double {
            let weight = (1 + min(max(analysis.confidence, 0), 1)) / 2
            if let bpm = analysis.bpm, TempoRelation.matches(bpm, hypothesis, tolerance: tolerance) {
                return weight
            }
            let strength = analysis.candidates
                .filter { TempoRelation.matches($0.bpm, hypothesis, tolerance: tolerance) }
                .map(\.strength).max() ?? 0
            return weight * candidateVote * min(max(strength, 0), 1)
        }

        var best: (score: Double, agreeing: [TempoAnalysis])?
        for hypothesis in found.compactMap(\.bpm) {
            let score = found.reduce(0) { $0 + vote(for: hypothesis, by: $1) }
            let agreeing = found.filter { TempoRelation.matches($0.bpm!, hypothesis, tolerance: tolerance) }
            if best == nil || score > best!.score + 1e-9 {
                best = (score, agreeing)
            }
        }
        guard let winner = best else { return ConsensusTempo(bpm: nil, detectors: []) }
        let weights = winner.agreeing.map { max($0.confidence, 1e-3) }
        let mean = zip(winner.agreeing, weights).reduce(0) { $0 + $1.0.bpm! * $1.1 } / weights.reduce(0, +)
        return ConsensusTempo(bpm: mean, detectors: Array(Set(winner.agreeing.map(\.detector))).sorted())
    }
}
