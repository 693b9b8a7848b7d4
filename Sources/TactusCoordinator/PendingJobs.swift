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

    /// The queued copy of a stored job.
    init(_ job: JobRecord) {
        self.init(id: job.id, song: job.song, name: job.songName, detector: job.detector, params: job.params)
    }

    init(id: Int64, song: SongID, name: String, detector: String, params: ParameterSet) {
        self.id = id
        self.song = song
        self.name = name
        self.detector = detector
        self.params = params
    }
}

/// The queued jobs in memory, first in first out per detector. The jobs table is the durable
/// copy; this mirrors its `queued` rows so dispatch needs no query. Each detector's queue is a
/// deque: taking the oldest job and putting one back in front cost the same however long the
/// queue is (tens of thousands of jobs under load).
struct PendingJobs {
    private var queues: [String: Deque<PendingJob>] = [:]
    private var ids: Set<Int64> = []
    /// The queued jobs of each song by detector, so a worker offering several detectors gets
    /// all of a song's jobs in one message without a search through every queue.
    private var songs: [SongID: [String: Int]] = [:]

    var count: Int { ids.count }

    /// True when job `id` is queued.
    func contains(_ id: Int64) -> Bool { ids.contains(id) }

    /// Adds a new job at the back of its detector's queue.
    mutating func append(_ job: PendingJob) {
        queues[job.detector, default: []].append(job)
        added(job)
    }

    /// Puts a job whose attempt failed back at the front: it has waited longest.
    mutating func requeue(_ job: PendingJob) {
        queues[job.detector, default: []].prepend(job)
        added(job)
    }

    /// Whether `detector` has a queued job.
    func hasJobs(_ detector: String) -> Bool { queues[detector] != nil }

    /// Takes the oldest job of `detector`.
    mutating func popFirst(_ detector: String) -> PendingJob? {
        // In place: a copy of the queue would cost as much as the queue is long.
        guard let job = queues[detector]?.popFirst() else { return nil }
        if queues[detector]?.isEmpty == true { queues[detector] = nil }
        removed(job)
        return job
    }

    /// Takes every queued job of `song` for one of `detectors`, at most `limit`, oldest
    /// first per detector. The jobs of a song are queued together, so each is found near
    /// the front of its queue.
    mutating func take(song: SongID, detectors: [String], limit: Int) -> [PendingJob] {
        guard let counts = songs[song] else { return [] }
        var taken: [PendingJob] = []
        for detector in detectors where counts[detector] != nil {
            while taken.count < limit, songs[song]?[detector] != nil,
                let index = queues[detector]?.firstIndex(where: { $0.song == song })
            {
                taken.append(removeFromQueue(detector, at: index))
            }
        }
        return taken
    }

    /// Removes job `id` if it is queued; returns it.
    mutating func remove(_ id: Int64) -> PendingJob? {
        guard ids.contains(id) else { return nil }
        for (detector, queue) in queues {
            if let index = queue.firstIndex(where: { $0.id == id }) {
                return removeFromQueue(detector, at: index)
            }
        }
        return nil
    }

    private mutating func removeFromQueue(_ detector: String, at index: Int) -> PendingJob {
        let job = queues[detector]!.remove(at: index)
        if queues[detector]!.isEmpty { queues[detector] = nil }
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

    /// Queued jobs per detector.
    var depths: [String: Int] { queues.mapValues(\.count) }
}
