import Testing
import TactusDetector

private func analysis(_ detector: String, _ bpm: Double?, confidence: Double, candidates: [(Double, Double)] = []) -> TempoAnalysis {
    let descriptor = DetectorDescriptor(name: detector, version: "1", summary: "test", specific: [])
    let output = DetectorOutput(
        bpm: bpm, confidence: confidence,
        candidates: (bpm.map { [TempoCandidate(bpm: $0, strength: 1)] } ?? [])
            + candidates.map { TempoCandidate(bpm: $0.0, strength: $0.1) },
        windows: [])
    return TempoAnalysis(descriptor: descriptor, params: ParameterSet(), output: output, seconds: 0)
}

@Suite struct ConsensusTests {
    @Test func noTempoWithoutAnalysesOrWithoutTempi() {
        #expect(Consensus.of([]) == ConsensusTempo(bpm: nil, detectors: []))
        #expect(Consensus.of([analysis("a", nil, confidence: 0)]).bpm == nil)
    }

    @Test func agreeingDetectorsGiveTheirConfidenceWeightedMean() throws {
        let consensus = Consensus.of([analysis("b", 120, confidence: 0.5), analysis("a", 123, confidence: 1)])
        let bpm = try #require(consensus.bpm)
        #expect(abs(bpm - (120 * 0.5 + 123) / 1.5) < 1e-9)
        #expect(consensus.detectors == ["a", "b"])
    }

    @Test func anOctaveCandidateSupportsTheMajority() throws {
        let consensus = Consensus.of([
            analysis("a", 70, confidence: 0.9, candidates: [(140, 0.95)]),
            analysis("b", 140, confidence: 0.5),
            analysis("c", 141, confidence: 0.4),
        ])
        let bpm = try #require(consensus.bpm)
        #expect(abs(bpm - 140.44) < 0.1)
        #expect(consensus.detectors == ["b", "c"])
    }

    @Test func theMoreConfidentDetectorWinsADisagreement() {
        let consensus = Consensus.of([analysis("a", 100, confidence: 0.9), analysis("b", 150, confidence: 0.1)])
        #expect(consensus.bpm == 100)
        #expect(consensus.detectors == ["a"])
    }
}

@Suite struct ConsensusVotingTests {
    @Test func twoAgreeingDetectorsOutvoteAMoreConfidentThirdAtAnotherOctave() throws {
        let consensus = Consensus.of([
            analysis("comb", 85, confidence: 0.9, candidates: [(170, 0.8)]),
            analysis("energy", 169.8, confidence: 0.1, candidates: [(85, 1)]),
            analysis("autocorrelation", 170.2, confidence: 0.2, candidates: [(85, 0.9)]),
        ])
        let bpm = try #require(consensus.bpm)
        #expect(abs(bpm - 170) < 0.3)
        #expect(consensus.detectors == ["autocorrelation", "energy"])
    }

    @Test func candidatesDecideBetweenDetectorsThatAllDisagree() throws {
        // Three different answers; 120 is also a strong candidate of the other two.
        let consensus = Consensus.of([
            analysis("a", 120, confidence: 0.3),
            analysis("b", 60, confidence: 0.3, candidates: [(120, 0.9)]),
            analysis("c", 180, confidence: 0.3, candidates: [(120, 0.8)]),
        ])
        #expect(consensus.bpm == 120)
        #expect(consensus.detectors == ["a"])
    }

    @Test func aTempoOnlyCandidatesProposeCanWin() throws {
        // The three tempi disagree; 180 is none of them but a strong candidate of all three.
        let consensus = Consensus.of([
            analysis("a", 90, confidence: 0.4, candidates: [(180, 0.95)]),
            analysis("b", 120, confidence: 0.4, candidates: [(180, 0.9)]),
            analysis("c", 60, confidence: 0.4, candidates: [(180, 0.9)]),
        ])
        let bpm = try #require(consensus.bpm)
        #expect(abs(bpm - 180) < 1e-9)
        #expect(consensus.detectors.isEmpty)
    }

    @Test func theConfidenceIsTheConfidenceWeightedSupportPerDetector() throws {
        let unanimous = Consensus.of([analysis("a", 120, confidence: 1), analysis("b", 120, confidence: 1)])
        #expect(unanimous.confidence == 1)
        // b supports 120 with half a vote times its candidate's strength 0.8, times its confidence.
        let split = Consensus.of([analysis("a", 120, confidence: 0.6), analysis("b", 60, confidence: 0.5, candidates: [(120, 0.8)])])
        #expect(split.bpm == 120)
        #expect(abs((split.confidence ?? 0) - (0.6 + 0.5 * 0.5 * 0.8) / 2) < 1e-12)
    }
}
