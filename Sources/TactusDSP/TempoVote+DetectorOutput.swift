import TactusDetector

extension DetectorOutput {
    /// The output of a session whose tempo the shared windowed vote decided.
    ///
    /// Every field of `result` maps onto the detector interface unchanged: the song's tempo,
    /// the reason it has none, the confidence, the candidates (strongest first) and one
    /// ``AnalysisWindow`` per window of the vote. A plugin built on ``TempoVote`` ends its
    /// session with it:
    ///
    /// ```swift
    /// func finish() -> DetectorOutput {
    ///     DetectorOutput(voted: TempoVote(configuration: vote).decide(envelope, salience: salience))
    /// }
    /// ```
    public init(voted result: TempoVote.Result) {
        self.init(
            bpm: result.bpm, reason: result.reason, confidence: result.confidence,
            candidates: result.candidates.map { TempoCandidate(bpm: $0.bpm, strength: $0.strength) },
            windows: result.windows.map {
                AnalysisWindow(
                    startS: $0.startSeconds, durationS: $0.durationSeconds, energy: $0.energy,
                    bpm: $0.bpm, strength: $0.strength)
            })
    }
}
