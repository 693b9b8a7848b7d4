import Foundation
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// A worker's RESULT for several jobs of one song is stored in one transaction with one new
/// consensus, each result on its own: a stale one and a refused one take nothing from the rest.
@Suite struct FinishJobsTests {
    @Test func eachResultIsStoredOrNotOnItsOwnWithOneConsensusForTheSong() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(1, duration: 180)
        let jobs = try library.enqueue(song, jobs: ["a", "b", "c", "d"].map { JobRequest(detector: $0) })
        let attempts = try jobs.map { try library.startJob($0.id, worker: "w") }
        var beyondTheSong = Fixture.record("c", bpm: 124)
        beyondTheSong.analysis.windows = [AnalysisWindow(startS: 1_000, durationS: 12, energy: 0.01, bpm: 124, strength: 0.5)]
        let finished = try library.finishJobs(
            [
                FinishedJob(id: jobs[0].id, attempt: attempts[0], result: Fixture.record("a", bpm: 124)),
                FinishedJob(id: jobs[1].id, attempt: attempts[1] + 1, result: Fixture.record("b", bpm: 124)),
                FinishedJob(id: jobs[2].id, attempt: attempts[2], result: beyondTheSong),
                FinishedJob(id: jobs[3].id, attempt: attempts[3], result: Fixture.record("d", bpm: 248.4)),
            ], durationS: 180.5)
        #expect(finished.outcomes.count == 4)
        #expect(finished.outcomes[0] == .stored && finished.outcomes[1] == .stale && finished.outcomes[3] == .stored)
        guard case .refused = finished.outcomes[2] else {
            Issue.record("a result beyond the song's end is refused, got \(finished.outcomes[2])")
            return
        }
        #expect(Set(try library.analyses(of: song.id).map(\.record.analysis.detector)) == ["a", "d"])
        let states = try library.jobs(of: song.id).map(\.state)
        #expect(states == [.done, .running, .running, .done])
        let completion = try #require(finished.completion)
        #expect(!completion.songFinished)
        #expect(completion.consensus.bpm.map { abs($0 - 124) < 1 } == true, "\(completion.consensus)")
        #expect(try library.consensus(of: song.id) == completion.consensus)
        #expect(try library.song(song.id)?.durationS == 180.5)

        // Nothing stored: no completion, and the song's duration is left as it was.
        let none = try library.finishJobs([FinishedJob(id: jobs[0].id, attempt: attempts[0], result: Fixture.record("a", bpm: 90))], durationS: 99)
        #expect(none.outcomes == [.stale] && none.completion == nil)
        #expect(try library.song(song.id)?.durationS == 180.5)
    }

    /// A song keeps the ``Library/maxFinishedJobsPerSong`` finished jobs that ended last: older
    /// ones are forgotten as jobs finish, the active ones never, and a job that has just ended
    /// is kept however old it is (its client reads it), so what each result reads and its
    /// `song.done` lists stays bounded however often the song is analysed.
    @Test func aSongKeepsOnlyTheFinishedJobsThatEndedLast() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(1)
        let limit = Library.maxFinishedJobsPerSong
        let jobs = try library.enqueue(song, jobs: (0..<(limit + 12)).map { JobRequest(detector: "d\($0)") })
        let failure = AnalysisFailure(code: .cancelled, message: "cancelled by a test")
        for job in jobs.dropLast(2) {
            _ = try #require(try library.endJob(job.id, state: .cancelled, failure: failure))
        }
        let kept = try library.jobs(of: song.id)
        #expect(kept.count == limit + 2)
        #expect(kept.filter { !$0.state.isActive }.map(\.id) == jobs.dropLast(2).suffix(limit).map(\.id), "the newest finished jobs")
        #expect(try library.activeJobs(of: song.id).map(\.detector) == jobs.suffix(2).map(\.detector))
        #expect(try library.job(jobs[0].id) == nil)

        // The oldest job still queued ends after all the others: it is kept, the others make room.
        let oldest = jobs[jobs.count - 2]
        _ = try #require(try library.endJob(oldest.id, state: .cancelled, failure: failure))
        #expect(try library.job(oldest.id)?.state == .cancelled)
        #expect(try library.jobs(of: song.id).count == limit + 1)
    }

    @Test func jobsOfTwoSongsAreRefusedAndNothingIsStored() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let first = try #require(try library.enqueue(Fixture.song(1), jobs: [JobRequest(detector: "a")]).first)
        let second = try #require(try library.enqueue(Fixture.song(2), jobs: [JobRequest(detector: "a")]).first)
        let attempts = try [first, second].map { try library.startJob($0.id, worker: "w") }
        #expect(throws: StoreError.self) {
            try library.finishJobs([
                FinishedJob(id: first.id, attempt: attempts[0], result: Fixture.record("a", bpm: 124)),
                FinishedJob(id: second.id, attempt: attempts[1], result: Fixture.record("a", bpm: 124)),
            ])
        }
        #expect(try library.analyses(of: Fixture.song(1).id).isEmpty)
        #expect(try library.jobs(of: Fixture.song(1).id).map(\.state) == [.running])
    }
}
