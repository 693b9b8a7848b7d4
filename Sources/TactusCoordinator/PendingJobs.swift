import DequeModule
import TactusDetector
import TactusModel
import TactusStore

/// A queued job as the dispatcher needs it.
struct PendingJob: Sendable, Hashable {
    var id: Int64
    var song: SongID
    /// The name the song was submitted with, for the worker's messages and ours.
    var name: String
    var detector: String
    var params: ParameterSet
    /// Whose turn the job waits for (``PendingJobs``): the client that submitted it, or
    /// ``PendingJobs/sharedLane`` (scans, jobs recovered after a restart).
    var lane: String

    /// The queued copy of a stored job, waiting in `lane`.
    init(_ job: JobRecord, lane: String = PendingJobs.sharedLane) {
        self.init(id: job.id, song: job.song, name: job.songName, detector: job.detector, params: job.params, lane: lane)
    }

    init(id: Int64, song: SongID, name: String, detector: String, params: ParameterSet, lane: String = PendingJobs.sharedLane) {
        self.id = id
        self.song = song
        self.name = name
        self.detector = detector
        self.params = params
        self.lane = lane
    }
}

/// The queued jobs in memory. The jobs table is the durable copy; this mirrors its `queued`
/// rows so dispatch needs no query.
///
/// Each detector's jobs wait in lanes, one per client (``PendingJob/lane``), first in first
/// out within a lane, and the lanes take turns: a client who queued 10,000 long songs delays
/// another client's one song by one job per worker, not by 10,000 (attack round 6). Each lane
/// is a deque, and so is the order of turns: taking the next job and putting one back in front
/// cost the same however long the queue is (tens of thousands of jobs under load).
struct PendingJobs {
    /// The lane of the jobs no client is waiting for: those of scans, and those found queued
    /// in the library after a restart.
    static let sharedLane = ""

    /// One detector's queued jobs: per lane, oldest first, and the lanes in the order they are
    /// served (each lane with jobs appears once).
    private struct DetectorQueue {
        var lanes: [String: Deque<PendingJob>] = [:]
        var turns: Deque<String> = []
        var count = 0
    }

    private var queues: [String: DetectorQueue] = [:]
    private var ids: Set<Int64> = []
    /// The queued jobs of each song by detector, so a worker offering several detectors gets
    /// all of a song's jobs in one message without a search through every queue.
    private var songs: [SongID: [String: Int]] = [:]

    var count: Int { ids.count }

    /// True when job `id` is queued.
    func contains(_ id: Int64) -> Bool { ids.contains(id) }

    /// Adds a new job at the back of its lane; a lane new to the detector's queue takes its
    /// turn after the others.
    mutating func append(_ job: PendingJob) {
        modify(job.detector) { queue in
            if queue.lanes[job.lane] == nil { queue.turns.append(job.lane) }
            queue.lanes[job.lane, default: []].append(job)
            queue.count += 1
        }
        added(job)
    }

    /// Puts a job whose attempt failed back at the front of its lane: it has waited longest,
    /// and a lane new to the queue takes the next turn.
    mutating func requeue(_ job: PendingJob) {
        modify(job.detector) { queue in
            if queue.lanes[job.lane] == nil { queue.turns.prepend(job.lane) }
            queue.lanes[job.lane, default: []].prepend(job)
            queue.count += 1
        }
        added(job)
    }

    /// Whether `detector` has a queued job.
    func hasJobs(_ detector: String) -> Bool { queues[detector] != nil }

    /// Takes the oldest job of the lane whose turn it is for `detector`; that lane then waits
    /// behind the others.
    mutating func popFirst(_ detector: String) -> PendingJob? {
        guard let lane = queues[detector]?.turns.first else { return nil }
        let job = removeFromQueue(detector, lane: lane, at: 0)
        // A lane left empty has left the turns; one with jobs goes behind the others.
        if queues[detector]?.lanes[lane] != nil {
            modify(detector) { queue in queue.turns.append(queue.turns.removeFirst()) }
        }
        return job
    }

    /// Takes every queued job of `song` in `lane` for one of `detectors`, at most `limit`,
    /// oldest first per detector. The jobs of a song are queued together, so each is found
    /// near the front of its lane.
    mutating func take(song: SongID, lane: String, detectors: [String], limit: Int) -> [PendingJob] {
        guard let counts = songs[song] else { return [] }
        var taken: [PendingJob] = []
        for detector in detectors where counts[detector] != nil {
            while taken.count < limit, songs[song]?[detector] != nil,
                let index = queues[detector]?.lanes[lane]?.firstIndex(where: { $0.song == song })
            {
                taken.append(removeFromQueue(detector, lane: lane, at: index))
            }
        }
        return taken
    }

    /// Removes job `id` if it is queued; returns it.
    mutating func remove(_ id: Int64) -> PendingJob? {
        guard ids.contains(id) else { return nil }
        for (detector, queue) in queues {
            for (lane, jobs) in queue.lanes {
                if let index = jobs.firstIndex(where: { $0.id == id }) {
                    return removeFromQueue(detector, lane: lane, at: index)
                }
            }
        }
        return nil
    }

    /// Queued jobs per detector.
    var depths: [String: Int] { queues.mapValues(\.count) }

    /// Changes `detector`'s queue in place (a copy would cost as much as the queue is long),
    /// dropping it once empty.
    private mutating func modify(_ detector: String, _ change: (inout DetectorQueue) -> Void) {
        change(&queues[detector, default: DetectorQueue()])
        if queues[detector]?.count == 0 { queues[detector] = nil }
    }

    private mutating func removeFromQueue(_ detector: String, lane: String, at index: Int) -> PendingJob {
        var job: PendingJob!
        modify(detector) { queue in
            job = queue.lanes[lane]!.remove(at: index)
            queue.count -= 1
            if queue.lanes[lane]!.isEmpty {
                queue.lanes[lane] = nil
                if let turn = queue.turns.firstIndex(of: lane) { queue.turns.remove(at: turn) }
            }
        }
        removed(job)
        return job
    }

    private mutating func added(_ job: PendingJob) {
        ids.insert(job.id)
        songs[job.song, default: [:]][job.detector, default: 0] += 1
    }

    private mutating func removed(_ job: PendingJob) {
        ids.remove(job.id)
        let left = (songs[job.song]?[job.detector] ?? 1) - 1
        songs[job.song]?[job.detector] = left > 0 ? left : nil
        if songs[job.song]?.isEmpty == true { songs[job.song] = nil }
    }
}
