import Foundation
import TactusDetector
import TactusModel
import TactusProtocol

/// One job of an assignment: which attempt of which detector.
struct AssignedJob: Sendable, Hashable {
    var job: Int64
    var attempt: Int
    var detector: String
}

/// What a worker is running: the jobs of one song it was sent in one JOB, and when they must
/// be done.
struct Assignment: Sendable, Hashable {
    var song: SongID
    /// The name the song was submitted with.
    var name: String
    /// The jobs, each with the attempt the library gave it (one for a version-1 worker).
    var jobs: [AssignedJob]
    var deadline: ContinuousClock.Instant

    /// The attempt of `job` this assignment runs, if it holds the job.
    func attempt(of job: Int64) -> Int? {
        jobs.first { $0.job == job }?.attempt
    }
}

/// A worker connected to the backend.
///
/// A worker's state machine: unknown -> (READY) -> idle -> (JOB) -> busy -> (RESULT) -> idle;
/// from any state, DISCONNECT, silence past its expiry or a job past its deadline -> gone.
struct ConnectedWorker: Sendable {
    /// The ROUTER routing id of the worker's DEALER.
    let address: [UInt8]
    let id: String
    /// The protocol version of its READY, which the coordinator speaks to it.
    let version: ProtocolVersion
    /// The detectors it offers, each named once (one for a version-1 worker).
    let detectors: [DetectorDescriptor]
    /// The parameters it was started with, per detector name (informational).
    let params: [String: ParameterSet]
    /// When the worker is dead unless something arrives from it.
    var expiry: ContinuousClock.Instant
    var assignment: Assignment?
    /// The library roots the worker declared it can open files under (READY's `roots`).
    var roots: Set<String> = []
    /// Whether it answers IDENTIFY for files below them (version 2 READY's `identifies`).
    var identifies = false
    /// Its IDENTIFIED answers in a row that identified fewer than half of their files.
    var fruitlessIdentifies = 0

    /// The declaration of `name` as this worker offers it.
    func descriptor(_ name: String) -> DetectorDescriptor? {
        detectors.first { $0.name == name }
    }

    var detectorNames: [String] { detectors.map(\.name) }
}

/// The workers connected to the backend, with an idle list per detector kept in
/// least-recently-used order (the worker idle the longest gets the next job). A worker that
/// offers several detectors is in the list of each while it is idle.
struct WorkerRegistry {
    private(set) var workers: [[UInt8]: ConnectedWorker] = [:]
    private var idle: [String: [[UInt8]]] = [:]

    var count: Int { workers.count }

    subscript(address: [UInt8]) -> ConnectedWorker? { workers[address] }

    /// Adds a worker that sent READY; it starts idle.
    mutating func add(_ worker: ConnectedWorker) {
        workers[worker.address] = worker
        for name in worker.detectorNames { idle[name, default: []].append(worker.address) }
    }

    /// Removes a worker; returns it (with the jobs it was running, if any).
    @discardableResult
    mutating func remove(_ address: [UInt8]) -> ConnectedWorker? {
        guard let worker = workers.removeValue(forKey: address) else { return nil }
        removeFromIdle(worker)
        return worker
    }

    private mutating func removeFromIdle(_ worker: ConnectedWorker) {
        for name in worker.detectorNames {
            idle[name]?.removeAll { $0 == worker.address }
            if idle[name]?.isEmpty == true { idle[name] = nil }
        }
    }

    /// Asks the worker to identify files no more (it let an IDENTIFY time out, or identified
    /// nothing too often).
    mutating func stopIdentifying(_ address: [UInt8]) {
        workers[address]?.identifies = false
    }

    /// Counts an IDENTIFIED of the worker, `fruitful` when it identified at least half of its
    /// files; the answers in a row that were not.
    mutating func identified(fruitful: Bool, by address: [UInt8]) -> Int {
        guard var worker = workers[address] else { return 0 }
        worker.fruitlessIdentifies = fruitful ? 0 : worker.fruitlessIdentifies + 1
        workers[address] = worker
        return worker.fruitlessIdentifies
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

    /// The least recently used idle worker of `detector`, left idle.
    func nextIdle(_ detector: String) -> ConnectedWorker? {
        idle[detector]?.first.flatMap { workers[$0] }
    }

    /// Marks an idle worker busy with `assignment`.
    mutating func assign(_ address: [UInt8], _ assignment: Assignment) {
        guard let worker = workers[address], worker.assignment == nil else { return }
        removeFromIdle(worker)
        workers[address]?.assignment = assignment
    }

    /// Puts a worker whose jobs are over back at the end of its detectors' idle lists.
    mutating func release(_ address: [UInt8]) {
        guard let worker = workers[address], worker.assignment != nil else { return }
        workers[address]?.assignment = nil
        for name in worker.detectorNames { idle[name, default: []].append(address) }
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
                let jobs = assignment.jobs.map { String($0.job) }.joined(separator: ", ")
                return (worker, "job\(assignment.jobs.count == 1 ? "" : "s") \(jobs) exceeded the time limit")
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
    /// first worker and the number of workers offering it.
    var offered: [(descriptor: DetectorDescriptor, workers: Int)] {
        var byName: [String: (DetectorDescriptor, Int)] = [:]
        for worker in workers.values {
            for detector in worker.detectors {
                byName[detector.name, default: (detector, 0)].1 += 1
            }
        }
        return byName.values.sorted { $0.0.name < $1.0.name }.map { ($0.0, $0.1) }
    }
}
