import Foundation
import Synchronization
import TactusDetector
import TactusProtocol
import TactusZMQ

/// External workers that do no analysis: each answers every JOB at once with the same
/// analysis, so that jobs per second through the coordinator measure the coordinator alone.
///
/// They speak the worker side of the protocol (READY, RESULT, HEARTBEAT, DISCONNECT) on
/// threads of their own. Until ``open()`` they hold the first job they get, so a benchmark
/// can fill the queue first and then time how fast it drains.
final class NullWorkers: Sendable {
    /// The detector they offer: only the common parameters.
    static let descriptor = DetectorDescriptor(
        name: "bench-null", version: "1", summary: "answers at once with 120 BPM (benchmarks only)", presets: [], specific: [])

    private let isOpen = Atomic<Bool>(false)
    private let isStopping = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)
    private let failure = Mutex<String?>(nil)

    /// Starts `count` workers connected to `backend`.
    init(count: Int, backend: String) {
        for index in 0..<count {
            running.add(1, ordering: .sequentiallyConsistent)
            let thread = Thread { [self] in
                do {
                    try serve(backend: backend, id: "bench-null-\(index)")
                } catch {
                    failure.withLock { $0 = "bench-null-\(index): \(error)" }
                }
                running.subtract(1, ordering: .sequentiallyConsistent)
            }
            thread.start()
        }
    }

    /// Answers held and future jobs at once.
    func open() {
        isOpen.store(true, ordering: .sequentiallyConsistent)
    }

    /// Disconnects every worker and waits until their threads end; returns the first error.
    func stop() -> String? {
        isStopping.store(true, ordering: .sequentiallyConsistent)
        while running.load(ordering: .sequentiallyConsistent) > 0 { Thread.sleep(forTimeInterval: 0.01) }
        return failure.withLock { $0 }
    }

    private func serve(backend: String, id: String) throws {
        let context = try ZMQContext(socketLinger: .zero)
        let socket = try context.socket(.dealer)
        try socket.connect(backend)
        let params = try Self.descriptor.resolve()
        try socket.send(try WorkerMessage.ready(ReadyBody(workerId: id, detector: DetectorInfo(Self.descriptor), params: params)).frames())
        var lastSent = ContinuousClock.now
        var held: [JobBody] = []
        while !isStopping.load(ordering: .sequentiallyConsistent) {
            if let frames = try socket.receive(timeout: .milliseconds(20)) {
                switch try CoordinatorMessage(frames: frames) {
                case .job(let body, _): held.append(body)
                case .songJob, .identify: throw NullWorkerError.disconnected("a version-2 message for a version-1 worker")
                case .heartbeat: break
                case .disconnect(let body): throw NullWorkerError.disconnected(body.error?.message ?? body.reason ?? "")
                }
            }
            if isOpen.load(ordering: .sequentiallyConsistent) {
                for job in held {
                    try socket.send(try WorkerMessage.result(Self.answer(job), envelope: nil).frames())
                    lastSent = .now
                }
                held.removeAll()
            }
            if ContinuousClock.now - lastSent > .seconds(1) {
                try socket.send(try WorkerMessage.heartbeat.frames())
                lastSent = .now
            }
        }
        try socket.send(try WorkerMessage.disconnect(DisconnectBody(reason: "the benchmark is over")).frames())
    }

    /// The fixed analysis that answers `job`.
    private static func answer(_ job: JobBody) -> ResultBody {
        let output = DetectorOutput(bpm: 120, confidence: 1, candidates: [TempoCandidate(bpm: 120, strength: 1)], windows: [])
        let analysis = TempoAnalysis(descriptor: descriptor, params: job.params, output: output, seconds: 0)
        return ResultBody(job: job.job, attempt: job.attempt, analysis: analysis, audio: nil)
    }
}

enum NullWorkerError: Error, CustomStringConvertible {
    case disconnected(String)

    var description: String {
        switch self {
        case .disconnected(let reason): "the coordinator disconnected the worker: \(reason)"
        }
    }
}
