import Testing

@testable import TactusDetector

/// Advisory detectors (beatnet) are shown but do not vote in the consensus.
@Suite struct AdvisoryConsensusTests {
    private func analysis(_ detector: String, bpm: Double, confidence: Double = 0.9) -> TempoAnalysis {
        TempoAnalysis(
            descriptor: DetectorDescriptor(name: detector, version: "1", summary: "", presets: [], specific: []),
            params: ParameterSet(),
            output: DetectorOutput(bpm: bpm, confidence: confidence, candidates: [TempoCandidate(bpm: bpm, strength: 1)], windows: []),
            seconds: 0)
    }

    @Test func beatnetDoesNotOutvoteTheOthersUnlessAskedFor() {
        // Without beatnet, the confident comb filter's 120 wins over the unsure 90; with it, 90.
        let analyses = [analysis("comb-filter", bpm: 120), analysis("beatnet", bpm: 90), analysis("other", bpm: 90, confidence: 0.1)]
        #expect(Consensus.advisoryDetectors.contains("beatnet"))
        let voting = Consensus.of(analyses)
        #expect(voting.bpm == 120)
        #expect(voting.detectors == ["comb-filter"])
        let every = Consensus.of(analyses, includingAdvisory: true)
        #expect(every.detectors == ["beatnet", "other"])
        #expect(every.bpm == 90)
    }

    @Test func aSongOnlyBeatnetFoundATempoForHasNoConsensus() {
        #expect(Consensus.of([analysis("beatnet", bpm: 128)]).bpm == nil)
    }
}
