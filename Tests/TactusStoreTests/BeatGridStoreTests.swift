import Foundation
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// The library keeps each song's constant beat grid (recorded with the song, or with a worker's
/// finished job) and gives it with query matches only while it agrees with the consensus.
@Suite struct BeatGridStoreTests {
    static let grid = BeatGrid(bpm: 124.02, firstBeatS: 0.131, clarity: 3.4)

    @Test func aRecordedGridComesBackWithTheSongAndItsMatches() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        var song = Fixture.song(1)
        song.beatGrid = Self.grid
        _ = try library.record(song, analyses: ["a", "b"].map { Fixture.record($0, bpm: 124) })
        #expect(try library.song(song.id)?.beatGrid == Self.grid)
        let match = try #require(try library.query(TempoQuery(range: 120...130)).first)
        #expect(match.beatGrid == Self.grid)
        // Recording the song again without a grid keeps it.
        song.beatGrid = nil
        _ = try library.record(song, analyses: [])
        #expect(try library.song(song.id)?.beatGrid == Self.grid)
    }

    /// A grid fitted when the consensus was 124 BPM no longer belongs to the song once its
    /// consensus is another tempo (another detector's analyses moved it): it is not given.
    @Test func aGridThatNoLongerAgreesWithTheConsensusIsNotGiven() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        var song = Fixture.song(2)
        song.beatGrid = Self.grid
        _ = try library.record(song, analyses: [Fixture.record("a", bpm: 124)])
        #expect(try library.query(TempoQuery(range: 100...200)).first?.beatGrid == Self.grid)
        _ = try library.record(Fixture.song(2), analyses: [Fixture.record("a", bpm: 93), Fixture.record("b", bpm: 93)])
        let match = try #require(try library.query(TempoQuery(range: 80...100)).first)
        #expect(match.song == song.id && match.beatGrid == nil)
    }

    @Test func aFinishedJobStoresTheWorkersGridAndAnInvalidOneIsRefused() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(3)
        let jobs = try library.enqueue(song, jobs: [JobRequest(detector: "a"), JobRequest(detector: "b")])
        let first = try #require(jobs.first), second = try #require(jobs.last)
        let attempt = try library.startJob(first.id, worker: "w")
        let bad = BeatGrid(bpm: 124, firstBeatS: 3, clarity: 2)
        #expect(throws: StoreError.self) {
            try library.finishJob(first.id, attempt: attempt, result: Fixture.record("a", bpm: 124), beatGrid: bad)
        }
        #expect(try library.song(song.id)?.beatGrid == nil)
        _ = try library.finishJob(first.id, attempt: attempt, result: Fixture.record("a", bpm: 124), beatGrid: Self.grid)
        #expect(try library.song(song.id)?.beatGrid == Self.grid)
        // A later job without a grid keeps it.
        let secondAttempt = try library.startJob(second.id, worker: "w")
        _ = try library.finishJob(second.id, attempt: secondAttempt, result: Fixture.record("b", bpm: 124))
        #expect(try library.song(song.id)?.beatGrid == Self.grid)
    }
}
