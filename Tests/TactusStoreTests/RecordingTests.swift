import Foundation
import GRDB
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct RecordingTests {
    @Test func recordingComputesTheConsensusWithTheDetectorModule() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let records = [
            Fixture.record("alpha", bpm: 120, confidence: 0.9), Fixture.record("beta", bpm: 121, confidence: 0.5),
            Fixture.record("gamma", bpm: 80, confidence: 0.4),
        ]
        let consensus = try library.record(Fixture.song(1), analyses: records)
        #expect(consensus.withoutMap == Consensus.of(records.map(\.analysis)).withoutMap)
        #expect(consensus.tempoMap?.stable == true, "the map made from the stored windows")
        #expect(consensus.detectors == ["alpha", "beta"])
        #expect(try library.consensus(of: Fixture.songID(1)) == consensus)
    }

    @Test func storingAnAnalysisAgainReplacesItAndItsConsensus() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [Fixture.record("alpha", bpm: 100), Fixture.record("beta", bpm: 100)])
        #expect(try library.consensus(of: Fixture.songID(1))?.bpm == 100)

        let replacement = Fixture.record("alpha", bpm: 150, worker: "worker-2")
        let beta = try library.store(Fixture.record("beta", bpm: 150), for: Fixture.songID(1))
        #expect(beta.bpm != nil)
        let consensus = try library.store(replacement, for: Fixture.songID(1))
        #expect(consensus.bpm == 150)
        #expect(consensus.detectors == ["alpha", "beta"])
        #expect(try library.counts().analyses == 2)
        let alpha = try library.analyses(of: Fixture.songID(1))[0]
        #expect(alpha.record.analysis.bpm == 150)
        #expect(alpha.record.worker == "worker-2")

        // Another version or preset is another analysis, not a replacement.
        try library.store(Fixture.record("alpha", bpm: 75, version: "2"), for: Fixture.songID(1))
        try library.store(Fixture.record("alpha", bpm: 76, preset: "classic"), for: Fixture.songID(1))
        #expect(try library.analyses(of: Fixture.songID(1)).map(\.record.label) == ["alpha", "alpha", "alpha/classic", "beta"])
        #expect(try library.counts().analyses == 4)
    }

    @Test func eachDetectorVotesOnceWithItsCurrentDefaultAnalysis() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let earlier = Date(timeIntervalSince1970: 1_750_000_000)
        let later = earlier.addingTimeInterval(60)
        let consensus = try library.record(
            Fixture.song(1),
            analyses: [
                // An old version and the classic preset agree with beta; the current default does not.
                Fixture.record("alpha", bpm: 120, confidence: 0.9, version: "1", at: earlier),
                Fixture.record("alpha", bpm: 120, confidence: 0.9, version: "2", preset: "classic", at: later),
                Fixture.record("alpha", bpm: 80, confidence: 0.9, version: "2", at: later),
                Fixture.record("beta", bpm: 120, confidence: 0.5, at: earlier),
            ])
        #expect(consensus.bpm == 80)
        #expect(consensus.detectors == ["alpha"])
        // A detector whose current analysis found nothing does not vote with an older one.
        let quiet = try library.store(Fixture.record("alpha", bpm: nil, version: "3", at: later.addingTimeInterval(60)), for: Fixture.songID(1))
        // Beta alone found a tempo, with confidence 0.5: the consensus confidence is its support.
        #expect(quiet.withoutMap == ConsensusTempo(bpm: 120, detectors: ["beta"], confidence: 0.5))
    }

    @Test func recordingASongAgainKeepsItsDateAndEnvelope() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let first = Fixture.song(3)
        try library.record(first, analyses: [])
        var again = first
        again.addedAt = first.addedAt.addingTimeInterval(1000)
        again.envelope = nil
        again.tags.title = "Renamed"
        try library.record(again, analyses: [])
        let stored = try #require(try library.song(first.id))
        #expect(stored.addedAt == first.addedAt)
        #expect(stored.envelope == first.envelope)
        #expect(stored.tags.title == "Renamed")
        #expect(try library.counts().songs == 1)
    }

    @Test func lookingUpAnAnalysisByDetectorVersionAndParameters() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let record = Fixture.record("alpha", bpm: 97)
        try library.record(Fixture.song(1), analyses: [record])
        let found = try library.analysis(
            of: Fixture.songID(1), detector: "alpha", version: "1", params: record.analysis.params)
        #expect(found?.record.analysis.bpm == 97)
        #expect(
            try library.analysis(of: Fixture.songID(1), detector: "alpha", version: "2", params: record.analysis.params) == nil)
        var other = record.analysis.params
        other["min_bpm"] = .number(70)
        #expect(try library.analysis(of: Fixture.songID(1), detector: "alpha", version: "1", params: other) == nil)
    }

    /// Every kind of bad input, each refused with an error naming the problem, the library unchanged.
    @Test(arguments: BadInput.allCases)
    func badInputIsRefusedAndChangesNothing(_ input: BadInput) throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 3) { _ in (120, 121, 122) }
        let before = try snapshot(library)
        // In a batch with a good song first: the whole batch is refused.
        let good = SongAnalyses(song: Fixture.song(8), analyses: [Fixture.record("alpha", bpm: 90)])
        #expect(throws: input.expected) { try library.record([good, input.entry]) }
        #expect(try snapshot(library) == before)
    }

    @Test func storingForAnUnknownSongIsRefusedAndTheBatchRolledBack() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 2) { _ in (120, 121, 122) }
        let before = try snapshot(library)
        let unknown = Fixture.songID(99)
        #expect(throws: StoreError.unknownSong(unknown.hex)) {
            try library.store([
                (Fixture.songID(0), Fixture.record("alpha", bpm: 60)), (unknown, Fixture.record("alpha", bpm: 60)),
            ])
        }
        #expect(try snapshot(library) == before)
    }

    /// Everything the library holds, as text, to compare before and after.
    func snapshot(_ library: Library) throws -> [String] {
        try library.pool.read { db in
            var lines = [String]()
            for table in ["songs", "analyses", "consensus", "reference_tempi"] {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1") {
                    lines.append("\(table) \(row)")
                }
            }
            return lines
        }
    }
}

enum BadInput: CaseIterable, Sendable {
    case bpmZero, bpmTooHigh, negativeDuration, negativeWindowDuration, negativeSeconds, candidateOutOfRange
    case doneWithoutTempo

    var entry: SongAnalyses {
        var song = Fixture.song(9)
        var record = Fixture.record("alpha", bpm: 100)
        switch self {
        case .bpmZero: record = Fixture.record("alpha", bpm: 0)
        case .bpmTooHigh: record = Fixture.record("alpha", bpm: 1001)
        case .negativeDuration: song.durationS = -1
        case .negativeWindowDuration: record.analysis.windows[3].durationS = -6
        case .negativeSeconds: record.analysis.seconds = -0.1
        case .candidateOutOfRange: record.analysis.candidates.append(TempoCandidate(bpm: 2000, strength: 0.1))
        case .doneWithoutTempo: record.analysis.bpm = nil
        }
        return SongAnalyses(song: song, analyses: [record])
    }

    var expected: StoreError {
        switch self {
        case .bpmZero: return .bpmOutOfRange(field: "alpha.bpm", value: 0)
        case .bpmTooHigh: return .bpmOutOfRange(field: "alpha.bpm", value: 1001)
        case .negativeDuration:
            return .invalidValue(field: "duration_s", value: "-1.0", accepted: "a duration >= 0 seconds")
        case .negativeWindowDuration:
            return .invalidValue(field: "alpha.windows[3].duration_s", value: "-6.0", accepted: "a duration >= 0 seconds")
        case .negativeSeconds:
            return .invalidValue(field: "alpha.seconds", value: "-0.1", accepted: "a duration >= 0 seconds")
        case .candidateOutOfRange: return .bpmOutOfRange(field: "alpha.candidates[2].bpm", value: 2000)
        case .doneWithoutTempo:
            return .invalidValue(field: "alpha.bpm", value: "null", accepted: "a tempo when the status is done")
        }
    }
}
