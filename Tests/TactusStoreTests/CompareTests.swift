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
        let failure = AnalysisFailure(code: .workerLost, message: "the worker stopped answering")
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
        #expect(comparison.consensus.withoutMap == expected.withoutMap)
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
        // An older version of alpha counts under its own label, set against the newest.
        try library.store(
            Fixture.record("alpha", bpm: 100, version: "0", at: Date(timeIntervalSince1970: 1_600_000_000)),
            for: Fixture.songID(1))

        // Widths that would ask for more bins than there is memory are refused.
        for width in [1e-300, 1e-9, 0.05, 2000, .infinity, .nan, 0, -1] {
            #expect(throws: StoreError.self) { try library.compareLibrary(binWidth: width) }
        }
        let comparison = try library.compareLibrary(binWidth: 20)
        #expect(comparison.songs == 5)
        #expect(comparison.agreements.map { "\($0.first) \($0.second)" } == ["alpha alpha@0", "alpha beta", "alpha@0 beta"])
        let old = try #require(comparison.agreements.first)
        #expect(old.songs == 1 && old.agree == 0 && old.agreeOctave == 0)  // 240 against 100 on song 1
        let pair = try #require(comparison.agreements.first { $0.first == "alpha" && $0.second == "beta" })
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
        // The consensus is measured against the references as the detectors are, last.
        #expect(comparison.accuracy.last?.detector == "consensus")
        let references = [100.0, 120, 140, 160]
        let consensusOfReferenced = try (0..<4).map { try library.consensus(of: Fixture.songID($0))?.bpm }
        #expect(accuracy["consensus"]?.count == 4)
        #expect(accuracy["consensus"]?.acc1 == Double(zip(consensusOfReferenced, references).filter { bpm, reference in
            bpm.map { abs($0 - reference) <= 0.04 * reference } ?? false }.count) / 4)
        #expect(comparison.histogram.map(\.count).reduce(0, +) == consensus.count)
        for bin in comparison.histogram {
            #expect(bin.width == 20)
            #expect(bin.count == consensus.filter { $0 >= bin.lower && $0 < bin.lower + 20 }.count)
        }
        #expect(comparison.histogram.first.map { $0.count > 0 } == true)
        #expect(comparison.histogram.last.map { $0.count > 0 } == true)
    }

    @Test func versionsAreComparedNumerically() {
        #expect(Library.isNewer("2.0.0", than: "1.0.0"))
        #expect(Library.isNewer("1.10.0", than: "1.9.2"))
        #expect(!Library.isNewer("1.0.0", than: "1.0.0"))
        #expect(Library.isNewer("1.0.1", than: "1.0"))
    }

    @Test func theSongsToCheckAreThoseWhereDetectorsDisagreeOrTheConsensusIsUnsure() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record([
            // Agreement with confidence: nothing to check.
            SongAnalyses(song: Fixture.song(0), analyses: [
                Fixture.record("alpha", bpm: 120, confidence: 0.8), Fixture.record("beta", bpm: 121, confidence: 0.7),
            ]),
            // beta reads half the tempo.
            SongAnalyses(song: Fixture.song(1), analyses: [
                Fixture.record("alpha", bpm: 140, confidence: 0.8), Fixture.record("beta", bpm: 70, confidence: 0.5),
            ]),
            // They agree, but neither is sure.
            SongAnalyses(song: Fixture.song(2), analyses: [
                Fixture.record("alpha", bpm: 100, confidence: 0.1), Fixture.record("beta", bpm: 100, confidence: 0.1),
            ]),
            // No tempo at all.
            SongAnalyses(song: Fixture.song(3), analyses: [Fixture.record("alpha", bpm: nil), Fixture.record("beta", bpm: nil)]),
        ])
        let comparison = try library.compareLibrary()
        #expect(comparison.toCheckTotal == 3)
        let bySong = Dictionary(uniqueKeysWithValues: comparison.toCheck.map { ($0.song, $0) })
        #expect(bySong[Fixture.songID(0)] == nil)
        #expect(bySong[Fixture.songID(1)]?.reasons == ["disagree"])
        #expect(bySong[Fixture.songID(1)]?.tempi.map(\.bpm) == [140, 70])
        #expect(bySong[Fixture.songID(2)]?.reasons == ["low-confidence"])
        #expect(bySong[Fixture.songID(3)]?.reasons == ["low-confidence"])
        // Least confident first.
        let confidences = comparison.toCheck.map { $0.consensus.confidence ?? 0 }
        #expect(confidences == confidences.sorted())
    }
}
