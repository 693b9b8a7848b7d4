import TactusDetector

/// A queued job as the dispatcher needs it.
struct PendingJob: Sendable, Hashable {
    var id: Int64
    var song: String
    var detector: String
    var params: ParameterSet
}

/// The queued jobs in memory, first in first out per detector. The jobs table is the durable
/// copy; this mirrors its `queued` rows so dispatch needs no query.
struct PendingJobs {
    private var queues: [String: [PendingJob]] = [:]
    private var ids: Set<Int64> = []

    var count: Int { ids.count }

    /// True when job `id` is queued.
    func contains(_ id: Int64) -> Bool { ids.contains(id) }

    /// Adds a new job at the back of its detector's queue.
    mutating func append(_ job: PendingJob) {
        queues[job.detector, default: []].append(job)
        ids.insert(job.id)
    }

    /// Puts a job whose attempt failed back at the front: it has waited longest.
    mutating func requeue(_ job: PendingJob) {
        queues[job.detector, default: []].insert(job, at: 0)
        ids.insert(job.id)
    }

    /// Takes the oldest job of `detector`.
    mutating func popFirst(_ detector: String) -> PendingJob? {
        guard var queue = queues[detector], !queue.isEmpty else { return nil }
        let job = queue.removeFirst()
        queues[detector] = queue.isEmpty ? nil : queue
        ids.remove(job.id)
        return job
    }

    /// Removes job `id` if it is queued; returns it.
    mutating func remove(_ id: Int64) -> PendingJob? {
        guard ids.contains(id) else { return nil }
        for (detector, queue) in queues {
            if let index = queue.firstIndex(where: { $0.id == id }) {
                let job = queue[index]
                queues[detector]!.remove(at: index)
                ids.remove(id)
                return job
            }
        }
        return nil
    }

    /// Queued jobs per detector.
    var depths: [String: Int] { queues.mapValues(\.count) }
}
