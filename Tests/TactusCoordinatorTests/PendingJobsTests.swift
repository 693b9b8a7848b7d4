import TactusDetector
import TactusModel
import Testing

@testable import TactusCoordinator

/// The queue's lanes: each client's jobs first in first out, the clients taking turns, so one
/// client's backlog does not hold another's song behind all of it (attack round 6, M2).
@Suite struct PendingJobsTests {
    static func song(_ n: Int) -> SongID { SongID(String(repeating: String(n % 10), count: 64))! }

    static func job(_ id: Int64, song: Int, detector: String = "comb-filter", lane: String) -> PendingJob {
        PendingJob(id: id, song: Self.song(song), name: "song \(song)", detector: detector, params: ParameterSet(), lane: lane)
    }

    @Test func clientsTakeTurnsAndEachClientsJobsKeepTheirOrder() {
        var pending = PendingJobs()
        for n in 1...5 { pending.append(Self.job(Int64(n), song: n, lane: "backlog")) }
        pending.append(Self.job(10, song: 9, lane: "other"))
        pending.append(Self.job(11, song: 8, lane: PendingJobs.sharedLane))
        #expect(pending.count == 7 && pending.depths == ["comb-filter": 7])
        var order = [Int64]()
        while let job = pending.popFirst("comb-filter") { order.append(job.id) }
        #expect(order == [1, 10, 11, 2, 3, 4, 5])
        #expect(pending.count == 0 && !pending.hasJobs("comb-filter") && pending.depths.isEmpty)
    }

    @Test func aRequeuedJobIsNextInItsLaneAndANewLaneIsServedNext() {
        var pending = PendingJobs()
        pending.append(Self.job(1, song: 1, lane: "a"))
        pending.append(Self.job(2, song: 2, lane: "a"))
        pending.append(Self.job(3, song: 3, lane: "b"))
        let first = pending.popFirst("comb-filter")
        #expect(first?.id == 1)
        pending.requeue(first!)
        // Lane a has had its turn: b is next, then a's requeued job before its second.
        #expect(pending.popFirst("comb-filter")?.id == 3)
        #expect(pending.popFirst("comb-filter")?.id == 1)
        pending.requeue(Self.job(4, song: 4, lane: "c"))
        #expect(pending.popFirst("comb-filter")?.id == 4)
        #expect(pending.popFirst("comb-filter")?.id == 2)
    }

    @Test func aSongsOtherJobsAreTakenFromItsLaneAndJobsRemovedAnywhere() {
        var pending = PendingJobs()
        pending.append(Self.job(1, song: 1, detector: "comb-filter", lane: "a"))
        pending.append(Self.job(2, song: 1, detector: "autocorrelation", lane: "a"))
        pending.append(Self.job(3, song: 2, detector: "autocorrelation", lane: "b"))
        let first = pending.popFirst("comb-filter")!
        let rest = pending.take(song: first.song, lane: first.lane, detectors: ["autocorrelation", "comb-filter"], limit: 10)
        #expect(rest.map(\.id) == [2])
        #expect(pending.remove(3)?.id == 3 && pending.remove(3) == nil)
        #expect(pending.count == 0 && pending.depths.isEmpty)
    }
}
