import Foundation
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// The library's consensus leaves out the analyses of the detectors it was opened with as
/// advisory (``Library/Options/advisoryDetectors``), however they were stored.
@Suite struct AdvisoryConsensusStoreTests {
    @Test func anAdvisoryDetectorsStoredAnalysisDoesNotVote() throws {
        let directory = try TemporaryDirectory()
        let song = Fixture.song(7)
        let analyses = [
            Fixture.record("comb-filter", bpm: 120, confidence: 0.9), Fixture.record("learned", bpm: 90, confidence: 0.9),
            Fixture.record("other", bpm: 90, confidence: 0.1),
        ]
        let advised = try Library(path: directory.file("advised.sqlite"), options: .init(advisoryDetectors: ["learned"]))
        let consensus = try advised.record(song, analyses: analyses)
        #expect(consensus.bpm == 120)
        #expect(consensus.detectors == ["comb-filter"])
        // One more analysis stored alone recomputes the consensus the same way.
        let later = try advised.store(Fixture.record("learned", bpm: 90, confidence: 1), for: song.id)
        #expect(later.bpm == 120)
        // A library that knows no advisory detector lets it vote.
        let plain = try Library(path: directory.file("plain.sqlite"))
        #expect(try plain.record(song, analyses: analyses).bpm == 90)
    }
}
