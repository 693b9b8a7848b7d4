/// The jobs each client has in flight (queued or running), for the per-client limit.
///
/// A client is its CURVE public key when the coordinator uses CURVE (the same key on every
/// connection), otherwise its connection's routing id. Jobs recovered after a restart belong
/// to no one. A job two clients submitted (the same song and detector) counts for both.
struct ClientJobs {
    private var jobsByClient: [String: Set<Int64>] = [:]
    private var clientsByJob: [Int64: Set<String>] = [:]

    /// The jobs in flight of `client`.
    func count(of client: String) -> Int {
        jobsByClient[client]?.count ?? 0
    }

    mutating func add(_ jobs: [Int64], to client: String) {
        guard !jobs.isEmpty else { return }
        jobsByClient[client, default: []].formUnion(jobs)
        for job in jobs { clientsByJob[job, default: []].insert(client) }
    }

    /// The lane job `job` waits in when it is queued again (``PendingJobs``): the first
    /// of the clients in flight with it, or the shared lane when none is (a job recovered
    /// after a restart).
    func lane(of job: Int64) -> String {
        clientsByJob[job]?.min() ?? PendingJobs.sharedLane
    }

    /// Forgets a job that ended (done, failed or cancelled).
    mutating func end(_ job: Int64) {
        guard let clients = clientsByJob.removeValue(forKey: job) else { return }
        for client in clients {
            jobsByClient[client]?.remove(job)
            if jobsByClient[client]?.isEmpty == true { jobsByClient[client] = nil }
        }
    }
}
