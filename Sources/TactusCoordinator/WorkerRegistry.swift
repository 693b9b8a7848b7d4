import Foundation
import TactusDetector

/// The job a worker is running: which attempt, and when it must be done.
struct Assignment: Sendable, Hashable {
    var job: Int64
    var attempt: Int
    var song: String
    /// The name the song was submitted with.
    var name: String
    var detector: String
    var deadline: ContinuousClock.Instant
}

/// A worker connected to the backend.
///
/// A worker's state machine: unknown -> (READY) -> idle -> (JOB) -> busy -> (RESULT) -> idle;
/// from any state, DISCONNECT, silence past its expiry or a job past its deadline -> gone.
struct ConnectedWorker: Sendable {
    /// The ROUTER routing id of the worker's DEALER.
    let address: [UInt8]
    let id: String
    let detector: DetectorDescriptor
    let params: ParameterSet
    /// When the worker is dead unless something arrives from it.
    var expiry: ContinuousClock.Instant
    var assignment: Assignment?
    /// The library roots the worker declared it can open files under (READY's `roots`).
    var roots: Set<String> = []
}

/// The workers connected to the backend, with an idle list per detector kept in
/// least-recently-used order (the worker idle the longest gets the next job).
struct WorkerRegistry {
    private(set) var workers: [[UInt8]: ConnectedWorker] = [:]
    private var idle: [String: [[UInt8]]] = [:]

    var count: Int { workers.count }

    subscript(address: [UInt8]) -> ConnectedWorker? { workers[address] }

    /// Adds a worker that sent READY; it starts idle.
    mutating func add(_ worker: ConnectedWorker) {
        workers[worker.address] = worker
        idle[worker.detector.name, default: []].append(worker.address)
    }

    /// Removes a worker; returns it (with the job it was running, if any).
    @discardableResult
    mutating func remove(_ address: [UInt8]) -> ConnectedWorker? {
        guard let worker = workers.removeValue(forKey: address) else { return nil }
        idle[worker.detector.name]?.removeAll { $0 == address }
        return worker
    }

    /// Notes that something arrived from the worker: it is alive until `expiry`.
    mutating func refresh(_ address: [UInt8], expiry: ContinuousClock.Instant) {
        workers[address]?.expiry = expiry
    }

    /// Moves every worker's expiry `duration` later: the coordinator was not listening for
    /// that long (its loop stalled), so the silence of its workers meanwhile does not count.
    mutating func postponeExpiries(by duration: Duration) {
        for address in workers.keys { workers[address]?.expiry += duration }
    }

    /// Takes the least recently used idle worker of `detector` and marks it busy with `assignment`.
    mutating func assign(_ detector: String, _ assignment: Assignment) -> ConnectedWorker? {
        guard var queue = idle[detector], !queue.isEmpty else { return nil }
        let address = queue.removeFirst()
        idle[detector] = queue
        workers[address]?.assignment = assignment
        return workers[address]
    }

    /// Records the attempt number the library gave the worker's job.
    mutating func setAttempt(_ address: [UInt8], _ attempt: Int) {
        workers[address]?.assignment?.attempt = attempt
    }

    /// Puts a worker whose job is over back at the end of its detector's idle list.
    mutating func release(_ address: [UInt8]) {
        guard let worker = workers[address], worker.assignment != nil else { return }
        workers[address]?.assignment = nil
        idle[worker.detector.name, default: []].append(address)
    }

    /// Detectors with at least one idle worker.
    var detectorsWithIdleWorkers: [String] {
        idle.filter { !$0.value.isEmpty }.map(\.key).sorted()
    }

    /// The workers to remove at `now`: silent past their expiry, or running a job past its
    /// deadline. One bounded pass over every worker, removing nothing while it looks (the
    /// reference Majordomo broker stops at the first live worker of its waiting list, so dead
    /// workers behind it are never purged, and busy ones are never checked at all).
    ///
    /// A worker for which `processRunning` is true (a local worker whose process the
    /// coordinator knows to be alive) is not silent while it holds a job within its deadline:
    /// under heavy load its heartbeats may come late, and the end of its process is reported
    /// at once.
    func expired(
        at now: ContinuousClock.Instant, processRunning: (ConnectedWorker) -> Bool = { _ in false }
    ) -> [(worker: ConnectedWorker, reason: String)] {
        workers.values.compactMap { worker in
            if let assignment = worker.assignment, assignment.deadline < now {
                return (worker, "job \(assignment.job) exceeded its time limit")
            }
            if worker.expiry < now && !(worker.assignment != nil && processRunning(worker)) {
                return (worker, "silent for too long")
            }
            return nil
        }
    }

    /// Every worker, sorted by id, for status answers.
    var all: [ConnectedWorker] { workers.values.sorted { $0.id < $1.id } }

    /// The detectors offered by connected workers: each name with the declaration of its
    /// first worker and the number of workers.
    var offered: [(descriptor: DetectorDescriptor, workers: Int)] {
        var byName: [String: (DetectorDescriptor, Int)] = [:]
        for worker in workers.values {
            byName[worker.detector.name, default: (worker.detector, 0)].1 += 1
        }
        return byName.values.sorted { $0.0.name < $1.0.name }.map { ($0.0, $0.1) }
    }
}
