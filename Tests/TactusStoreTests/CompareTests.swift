import Foundation
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct CompareTests {
    @Test func aSongComparedWithItsReference() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let failure = AnalysisFailure(code: "worker.lost", message: "the worker stopped answering")
        try library.record(
            Fixture.song(1),
            analyses: [
                Fixture.record("alpha", bpm: 124.5),  // 3.75 % above 120: a match
                Fixture.record("alpha", bpm: 125, preset: "classic"),  // 4.2 %: wrong
                Fixture.record("beta", bpm: 240),  // an octave error
                Fixture.record("gamma", bpm: 40),  // a third
                Fixture.record("delta", bpm: nil),
                .failed(detector: "epsilon", version: "1", params: ParameterSet(), failure: failure),
            ])
        try library.setReference(120, for: Fixture.songID(1))

        let comparison = try library.compare(Fixture.songID(1))
        #expect(comparison.results.map(\.label) == ["alpha", "alpha/classic", "beta", "delta", "epsilon", "gamma"])
        #expect(comparison.results.map(\.relation) == [.match, .wrong, .octave, .wrong, .wrong, .triple])
        #expect(comparison.results.map(\.status) == [.done, .done, .done, .noTempo, .failed, .done])
        #expect(comparison.results[4].failure == failure)
        #expect(comparison.results.allSatisfy { $0.candidates.count <= 3 })
        #expect(comparison.reference?.bpm == 120)
        #expect(comparison.reference?.source == "manual")
        #expect(comparison.file == "song-1.flac")
        // Each detector votes once, with its default preset: alpha/classic does not vote.
        let expected = Consensus.of(
            try library.analyses(of: Fixture.songID(1)).filter { $0.record.status == .done && $0.record.preset == "default" }
                .map(\.record.analysis))
        #expect(comparison.consensus == expected)
        #expect(comparison.consensusRelation == ReferenceRelation(bpm: expected.bpm, reference: 120))
    }

    @Test func aSongWithoutReferenceHasNoRelations() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [Fixture.record("alpha", bpm: 100)])
        let comparison = try library.compare(Fixture.songID(1))
        #expect(comparison.reference == nil)
        #expect(comparison.results.map(\.relation) == [nil])
        #expect(throws: StoreError.unknownSong(Fixture.songID(2).hex)) { try library.compare(Fixture.songID(2)) }
    }

    @Test func theLibraryComparedAgainstReferencesAndAcrossDetectors() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let alpha: [Double?] = [101, 240, 140, nil, 90]
        let beta: [Double?] = [100, 120, 70, 160, 180]
        try library.record(
            (0..<5).map { n in
                SongAnalyses(song: Fixture.song(n), analyses: [Fixture.record("alpha", bpm: alpha[n]), Fixture.record("beta", bpm: beta[n])])
            })
        for (n, reference) in [100.0, 120, 140, 160].enumerated() {
            try library.setReference(reference, for: Fixture.songID(n))
        }
        // An older version of alpha: only the most recent analysis under a label counts.
        try library.store(
            Fixture.record("alpha", bpm: 100, version: "0", at: Date(timeIntervalSince1970: 1_600_000_000)),
            for: Fixture.songID(1))

        let comparison = try library.compareLibrary(binWidth: 20)
        #expect(comparison.songs == 5)
        let pair = try #require(comparison.agreements.first)
        #expect(comparison.agreements.count == 1)
        #expect(pair.first == "alpha" && pair.second == "beta")
        #expect(pair.songs == 4)  // song 3: alpha found no tempo
        #expect(pair.agree == 0.25)  // song 0 only
        #expect(pair.agreeOctave == 1)

        let accuracy = Dictionary(uniqueKeysWithValues: comparison.accuracy.map { ($0.detector, $0) })
        #expect(accuracy["alpha"]?.count == 4)
        #expect(accuracy["alpha"]?.acc1 == 0.5)  // 101 and 140
        #expect(accuracy["alpha"]?.acc2 == 0.75)  // and 240 for 120
        #expect(accuracy["alpha"]?.meanAbsoluteError == 121.0 / 3)
        #expect(accuracy["beta"]?.count == 4)
        #expect(accuracy["beta"]?.acc1 == 0.75)
        #expect(accuracy["beta"]?.acc2 == 1)
        #expect(accuracy["beta"]?.meanAbsoluteError == 17.5)

        let consensus = try (0..<5).compactMap { try library.consensus(of: Fixture.songID($0))?.bpm }
        #expect(comparison.histogram.map(\.count).reduce(0, +) == consensus.count)
        for bin in comparison.histogram {
            #expect(bin.width == 20)
            #expect(bin.count == consensus.filter { $0 >= bin.lower && $0 < bin.lower + 20 }.count)
        }
        #expect(comparison.histogram.first.map { $0.count > 0 } == true)
        #expect(comparison.histogram.last.map { $0.count > 0 } == true)
    }
}
