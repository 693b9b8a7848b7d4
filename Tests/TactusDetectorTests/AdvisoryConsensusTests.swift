import Testing

@testable import TactusDetector

/// Advisory detectors (``DetectorDescriptor/advisory``, beatnet) are shown but do not vote in
/// the consensus, and run only when named.
@Suite struct AdvisoryConsensusTests {
    private func analysis(_ detector: String, bpm: Double, confidence: Double = 0.9) -> TempoAnalysis {
        TempoAnalysis(
            descriptor: DetectorDescriptor(name: detector, version: "1", summary: "", presets: [], specific: []),
            params: ParameterSet(),
            output: DetectorOutput(bpm: bpm, confidence: confidence, candidates: [TempoCandidate(bpm: bpm, strength: 1)], windows: []),
            seconds: 0)
    }

    @Test func anAdvisoryDetectorDoesNotOutvoteTheOthers() {
        // Without the advisory one, the confident comb filter's 120 wins over the unsure 90;
        // with it voting, 90.
        let analyses = [analysis("comb-filter", bpm: 120), analysis("learned", bpm: 90), analysis("other", bpm: 90, confidence: 0.1)]
        let voting = Consensus.of(analyses, advisory: ["learned"])
        #expect(voting.bpm == 120)
        #expect(voting.detectors == ["comb-filter"])
        let every = Consensus.of(analyses)
        #expect(every.detectors == ["learned", "other"])
        #expect(every.bpm == 90)
    }

    @Test func aSongOnlyAnAdvisoryDetectorFoundATempoForHasNoConsensus() {
        #expect(Consensus.of([analysis("learned", bpm: 128)], advisory: ["learned"]).bpm == nil)
    }

    /// Two detectors that differ only in their descriptor's `advisory`.
    private struct Voting: TempoDetector {
        static let descriptor = DetectorDescriptor(name: "voting", version: "1", summary: "", presets: [], specific: [])
        let parameters: ParameterSet
        init(parameters: ParameterSet) { self.parameters = parameters }
        func makeSession(format: SignalFormat) -> any DetectorSession { preconditionFailure("not run") }
    }

    private struct Advising: TempoDetector {
        static let descriptor = DetectorDescriptor(name: "advising", version: "1", summary: "", presets: [], specific: [], advisory: true)
        let parameters: ParameterSet
        init(parameters: ParameterSet) { self.parameters = parameters }
        func makeSession(format: SignalFormat) -> any DetectorSession { preconditionFailure("not run") }
    }

    @Test func theDescriptorSaysWhichDetectorsRunByDefault() {
        let registry = DetectorRegistry([Advising.self, Voting.self])
        #expect(registry.names == ["advising", "voting"])
        #expect(registry.defaultNames == ["voting"])
        #expect(registry.advisoryNames == ["advising"])
    }
}
