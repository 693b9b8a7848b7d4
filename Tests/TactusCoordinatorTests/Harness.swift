import Foundation
import Logging
import TactusAudio
import TactusAudioProbe
import TactusCoordinator
import TactusDetector
import TactusModel
import TactusProtocol
import TactusServiceHost
import TactusTestSupport
import TactusZMQ

/// A coordinator running on its own thread, on free loopback ports, in a temporary directory.
final class RunningCoordinator: @unchecked Sendable {
    let coordinator: Coordinator
    let endpoints: BoundEndpoints
    let context: ZMQContext
    private let finished = DispatchSemaphore(value: 0)

    /// Starts a coordinator; `configure` adjusts the test defaults: fast heartbeats, and a
    /// liveness long enough (3 s) that a busy machine does not make idle test workers look
    /// dead; the tests of dead workers shorten it. `probe` reads the submitted songs' headers;
    /// `renderer` renders for `stretch`.
    init(
        directory: String, probe: any SongProbe = AudioProbe(), renderer: (any SongRenderer)? = nil,
        recordings: any RecordingAnalyzer = IsolatedRecordingAnalyzer(hosts: serviceHosts),
        configure: (inout CoordinatorConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = CoordinatorConfiguration(
            dataDirectory: directory, frontend: "tcp://127.0.0.1:*", backend: "tcp://127.0.0.1:*",
            events: "tcp://127.0.0.1:*",
            knownDetectors: [DetectorDescriptor(name: "fake", version: "1.0", summary: "a detector played by a test", specific: [])],
            jobTimeLimitS: 30, heartbeatIntervalS: 0.3, liveness: 10, shutdownGraceS: 1)
        configure(&configuration)
        var logger = Logger(label: "test.coordinator")
        logger.logLevel = .critical
        coordinator = try Coordinator(configuration: configuration, probe: probe, renderer: renderer, recordings: recordings, logger: logger)
        context = try ZMQContext(socketLinger: .zero)
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var bound: BoundEndpoints?
        let coordinator = self.coordinator
        let finished = self.finished
        Thread.detachNewThread {
            do {
                try coordinator.run { endpoints in
                    bound = endpoints
                    ready.signal()
                }
            } catch {
                ready.signal()
            }
            finished.signal()
        }
        ready.wait()
        guard let bound else { throw HarnessError("the coordinator did not start") }
        endpoints = bound
    }

    /// Stops the coordinator and waits for its loop to return.
    func stop() {
        coordinator.stop()
        finished.wait()
        context.shutdown()
    }
}

/// The service hosts of the tests' coordinators: `tactus service-host` processes, as `tactus serve` runs them.
let serviceHosts = ServiceHostPool(
    configuration: ServiceHostPool.Configuration(
        executable: CLI.binary, arguments: ["service-host"], processes: 2, timeLimits: [.cadence: .seconds(30)]),
    logger: Logger(label: "test.service-host"))

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A worker played by the test: a DEALER speaking the worker protocol.
final class TestWorker {
    let socket: ZMQSocket
    let id: String
    /// The socket's connections as libzmq's monitor sees them.
    private let connection: ConnectionWatch

    /// Connects and sends READY; with `curve`, over CURVE with those keys.
    init(_ running: RunningCoordinator, detector: String = "fake", id: String, curve: CurveClientKeys? = nil) throws {
        self.id = id
        socket = try running.context.socket(.dealer)
        if let curve { try socket.set(curve.socketOptions) }
        connection = try ConnectionWatch(socket, context: running.context)
        try socket.connect(running.endpoints.backend)
        let descriptor = DetectorDescriptor(name: detector, version: "1.0", summary: "a detector played by a test", specific: [])
        let ready = WorkerMessage.ready(ReadyBody(workerId: id, detector: DetectorInfo(descriptor), params: try descriptor.resolve()))
        try socket.send(try ready.frames())
    }

    /// Waits for a JOB, heartbeating meanwhile; nil after `timeout`.
    func nextJob(timeout: Duration = .seconds(5)) throws -> (JobBody, [UInt8])? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            try heartbeat()
            if let frames = try socket.receive(timeout: .milliseconds(50)),
                case .job(let body, let audio) = try CoordinatorMessage(frames: frames)
            {
                return (body, audio)
            }
        }
        return nil
    }

    /// Waits until the coordinator has refused this worker's connection: the connection was
    /// dropped and none has completed its handshake (CURVE refused the keys). READY, queued
    /// until a handshake succeeds, was never delivered.
    func awaitRefusal(timeout: Duration = .seconds(10)) throws {
        try Wait.until("the coordinator to refuse worker \(id)'s connection", timeout: timeout) {
            try connection.disconnections > 0 && !connection.isConnected
        }
    }

    /// Sends HEARTBEAT if it can be queued now (a DEALER whose CURVE handshake was refused
    /// has no connection to queue on).
    func heartbeat() throws {
        _ = try socket.trySend(try WorkerMessage.heartbeat.frames())
    }

    /// Answers `job` with a tempo.
    func finish(_ job: JobBody, bpm: Double, detector: String = "fake") throws {
        let descriptor = DetectorDescriptor(name: detector, version: "1.0", summary: "", specific: [])
        let analysis = TempoAnalysis(
            descriptor: descriptor, params: try descriptor.resolve(),
            output: DetectorOutput(
                bpm: bpm, confidence: 0.9, candidates: [TempoCandidate(bpm: bpm, strength: 1)],
                windows: [AnalysisWindow(startS: 0, durationS: 8, energy: 0.1, bpm: bpm, strength: 0.9)]),
            seconds: 0.01)
        let body = ResultBody(
            job: job.job, attempt: job.attempt, analysis: analysis,
            audio: AudioFacts(format: "wav", durationS: 6, sampleRate: 22050, channels: 1), envelopeHopS: 0.0232)
        try socket.send(try WorkerMessage.result(body, envelope: [0.1, 0.2, 0.3]).frames())
    }

    /// Answers `job` with a failure.
    func fail(_ job: JobBody, code: ErrorCode, message: String) throws {
        try socket.send(try WorkerMessage.result(ResultBody(job: job.job, attempt: job.attempt, error: ErrorBody(code: code, message: message)), envelope: nil).frames())
    }
}

/// A client played by the test: a DEALER on the frontend and a SUB on the events.
final class TestClient {
    let socket: ZMQSocket
    let events: ZMQSocket
    /// The commands whose replies the client reads.
    let commands: ClientCommands
    private var counter = 0

    /// Connects to the frontend and the events; with `curve`, over CURVE with those keys.
    init(_ running: RunningCoordinator, curve: CurveClientKeys? = nil, commands: ClientCommands = .standard) throws {
        self.commands = commands
        socket = try running.context.socket(.dealer)
        if let curve { try socket.set(curve.socketOptions) }
        try socket.connect(running.endpoints.frontend)
        events = try running.context.socket(.sub)
        if let curve { try events.set(curve.socketOptions) }
        try events.set(.subscribe([]))
        try events.connect(running.endpoints.events)
    }

    /// Sends a request and returns the reply's outcome.
    func request(_ body: ClientRequest.Body) throws -> ClientReply.Outcome {
        guard let outcome = try request(body, timeout: .seconds(10)) else { throw HarnessError("no reply to \(body.command)") }
        return outcome
    }

    /// Sends a request and returns the reply's outcome, nil when none came within `timeout`.
    func request(_ body: ClientRequest.Body, timeout: Duration) throws -> ClientReply.Outcome? {
        counter += 1
        let id = Array("r\(counter)".utf8)
        // Not queued (no connection: a refused CURVE handshake) is as good as unanswered.
        guard try socket.trySend(try ClientRequest(requestID: id, body).frames()) else { return nil }
        guard let frames = try socket.receive(timeout: timeout) else { return nil }
        let reply = try ClientReply(frames: frames, commands: commands)
        guard reply.requestID == id else { throw HarnessError("reply to another request") }
        return reply.outcome
    }

    /// Waits until the coordinator has `count` workers, keeping `worker` alive meanwhile.
    func waitForWorkers(_ count: Int, heartbeating worker: TestWorker) throws {
        _ = try workers(count, heartbeating: worker.heartbeat)
    }

    /// The coordinator's workers once there are `count`, `heartbeating` called before each look.
    func workers(_ count: Int, heartbeating: () throws -> Void) throws -> [WorkerInfo] {
        try Wait.value("the coordinator to have \(count) workers", timeout: .seconds(10)) {
            try heartbeating()
            guard let status = try request(.status(StatusRequest())).answer(StatusCommand.self), let workers = status.server?.workers,
                workers.count == count
            else { return nil }
            return workers
        }
    }

    /// Waits for an event satisfying `matches`.
    func waitForEvent(timeout: Duration = .seconds(10), _ matches: (Event) -> Bool) throws -> Event? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frames = try events.receive(timeout: .milliseconds(100)), let event = try? Event(frames: frames), matches(event) {
                return event
            }
        }
        return nil
    }
}

/// A short synthesised WAV song (6 s at 22.05 kHz) whose bytes differ with `seed`.
func testSong(seed: UInt64 = 1) throws -> [UInt8] {
    try TestSong.clickTrack(bpm: 100 + Double(seed % 50), seconds: 6)
}
