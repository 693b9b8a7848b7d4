import Foundation
import Logging
import Synchronization
import TactusModel
import TactusProtocol
import TactusZMQ

/// A worker process's engine: it offers one or more detectors to a coordinator and analyses
/// the songs the coordinator sends it, one at a time, each decoded once for all the jobs of
/// the song it was sent (`protocol/SPEC.md`, section 4).
///
/// ``run()`` owns a DEALER socket connected to the coordinator's backend. It sends READY,
/// (in protocol version 2 when it offers several detectors, falling back to version 1 and its
/// first detector when the coordinator speaks only that), then a message at least every
/// heartbeat interval, and hands each JOB to an analysis thread
/// so heartbeats go on during long analyses; the RESULT goes back as soon as the analysis
/// ends. When nothing has come from the coordinator for ``WorkerConfiguration/expiry``, or
/// the coordinator sends DISCONNECT, the worker closes its socket, waits (1 s doubling to
/// 32 s while the coordinator does not answer), and connects again with a new READY; a job
/// in progress is abandoned then (the coordinator requeues it) and its late result dropped.
///
/// ```swift
/// let worker = Worker(configuration: configuration, logger: Logger(label: "tactus.worker"))
/// // From a signal handler: the first stop lets the running job finish, a second stops at once.
/// signalSource.setEventHandler { worker.stop() }
/// try worker.run()   // returns after sending DISCONNECT
/// ```
public final class Worker: Sendable {
    public let configuration: WorkerConfiguration
    private let logger: Logger
    private let stopState = Mutex(StopState.running)

    private enum StopState {
        case running
        /// Leave once the current job's result is sent, or at the deadline.
        case draining(deadline: ContinuousClock.Instant)
        case immediately
    }

    public init(configuration: WorkerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Asks ``run()`` to return. The first call lets the running job finish (for at most
    /// ``WorkerConfiguration/shutdownGrace``); a second call leaves at once, abandoning it.
    /// Either way the coordinator gets DISCONNECT. Thread-safe.
    public func stop() {
        let grace = configuration.shutdownGrace
        let state = stopState.withLock { state -> StopState in
            switch state {
            case .running: state = .draining(deadline: ContinuousClock.now + grace)
            case .draining, .immediately: state = .immediately
            }
            return state
        }
        if case .immediately = state {
            logger.notice("stopping now")
        } else {
            logger.notice("stopping once the current job is done (stop again to leave at once)")
        }
    }

    /// Connects and serves jobs until ``stop()``; then sends DISCONNECT and returns once it
    /// is delivered (waiting at most half a second for that).
    ///
    /// - Throws: only when the worker cannot start: the ZeroMQ context or the analysis
    ///   thread's socket cannot be created, or the endpoint is invalid.
    public func run() throws(ZMQError) {
        // Two contexts: the analysis thread may still hold the inproc one when run() returns
        // (a job abandoned at once), while the network one must end here, as its
        // termination is what waits for the DISCONNECT to be delivered.
        let threads = try ZMQContext()
        // Healthy only once the coordinator is heard from, and no longer once stopped (a file
        // left by an earlier run, or fresh at the end, must not say otherwise).
        configuration.healthFile?.remove()
        defer { configuration.healthFile?.remove() }
        // Ends the analysis thread, whatever it is doing, once its current job is done.
        defer { threads.shutdown() }
        let analysisEndpoint = "inproc://tactus-analysis-\(UUID().uuidString)"
        let analysis = try threads.socket(.pair)
        try analysis.bind(analysisEndpoint)
        let handoff = JobHandoff()
        AnalysisThread.start(
            context: threads, endpoint: analysisEndpoint, handoff: handoff,
            runner: JobRunner(
                detectors: configuration.detectors.map(\.type), decoding: configuration.decoding,
                timeLimit: configuration.analysisTimeLimit, libraryRoots: configuration.libraryRoots),
            niceness: configuration.analysisNiceness, logger: logger)
        let network = try ZMQContext(socketLinger: .zero)
        let link = CoordinatorLink(
            configuration: configuration, context: network, analysis: analysis, handoff: handoff, logger: logger)
        try link.connect()
        if let megabytes = configuration.jobMemoryMegabytes {
            // Now that the threads and sockets exist: the limit is what jobs may add to them.
            do {
                let limit = try ResourceLimits.limitMemory(toCurrentSizePlus: megabytes)
                logger.debug("memory limited", metadata: ["bytes": "\(limit)", "jobs": "\(megabytes) MiB"])
            } catch {
                logger.error("\(error); running without a memory limit")
            }
        }
        while true {
            switch stopState.withLock({ $0 }) {
            case .running:
                break
            case .draining(let deadline):
                guard link.holdsJob && ContinuousClock.now < deadline else {
                    if link.holdsJob { logger.warning("the grace period is over: abandoning the current job") }
                    link.leave()
                    return
                }
            case .immediately:
                link.leave()
                return
            }
            do throws(ZMQError) {
                try link.turn(maximumWait: .milliseconds(100))
            } catch where error.isTerminated {
                return
            } catch {
                ResourceLimits.abortIfOutOfMemory(error, logger: logger)
                logger.error("\(error)")
                link.dropConnection(reason: "socket error")
            }
        }
    }
}

/// The worker's side of one coordinator relationship, across reconnections: the DEALER, the
/// timers, the job the coordinator believes this worker holds, and the jobs handed to the
/// analysis thread. Used from the thread that runs ``Worker/run()`` only.
private final class CoordinatorLink {
    private let configuration: WorkerConfiguration
    private let context: ZMQContext
    private let analysis: ZMQSocket
    private let handoff: JobHandoff
    private let logger: Logger
    private let clock = ContinuousClock()

    /// The connection, nil while waiting to reconnect.
    private var dealer: ZMQSocket?
    /// Counts connections, so results of jobs from an earlier connection are recognised.
    private var generation = 0
    private var lastReceived: ContinuousClock.Instant
    private var lastSent: ContinuousClock.Instant
    /// When the last turn began, to notice that this thread itself was not running.
    private var lastTurn: ContinuousClock.Instant
    /// Whether the coordinator has sent anything on this connection.
    private var answered = false
    /// Whether touching the health file failed (reported once).
    private var healthFileFailed = false
    /// Consecutive connections the coordinator did not answer, for the backoff.
    private var failures = 0
    private var reconnectAt: ContinuousClock.Instant?
    /// The JOB the coordinator is waiting for on the current connection.
    private var held: Order?
    /// JOBs given to the analysis thread, oldest first; it answers them in order.
    private var dispatched: [Order] = []
    /// The protocol version spoken: the configuration's preferred one, or version 1 once a
    /// coordinator said it speaks no other.
    private var version: ProtocolVersion

    /// A JOB handed to the analysis thread: its jobs (one in version 1) and the connection.
    private struct Order: Equatable {
        var jobs: [SongJobEntry]
        var song: SongID
        var version: ProtocolVersion
        var generation: Int

        var summary: String { jobs.map { "\($0.job) (attempt \($0.attempt))" }.joined(separator: ", ") }

        /// The RESULT failing every job of the order with `error`.
        func failure(_ error: ErrorBody) -> WorkerMessage {
            if version >= .v2 {
                return .songResult(
                    SongResultBody(song: song, results: jobs.map { SongJobAnswer(job: $0.job, attempt: $0.attempt, error: error) }),
                    envelope: nil)
            }
            return .result(ResultBody(job: jobs[0].job, attempt: jobs[0].attempt, error: error), envelope: nil)
        }
    }

    init(configuration: WorkerConfiguration, context: ZMQContext, analysis: ZMQSocket, handoff: JobHandoff, logger: Logger) {
        self.configuration = configuration
        self.context = context
        self.analysis = analysis
        self.handoff = handoff
        self.logger = logger
        lastReceived = clock.now
        lastSent = clock.now
        lastTurn = clock.now
        version = configuration.preferredVersion
    }

    var holdsJob: Bool { held != nil }

    /// Opens a new DEALER, connects it and sends READY.
    func connect() throws(ZMQError) {
        let socket = try context.socket(.dealer)
        try socket.set([.linger(.zero), .maxMessageSize(configuration.limits.maxFrameBytes)])
        if let curve = configuration.curve { try socket.set(curve.socketOptions) }
        try socket.connect(configuration.endpoint)
        generation += 1
        dealer = socket
        reconnectAt = nil
        answered = false
        lastReceived = clock.now
        let offered = version >= .v2 ? configuration.detectors : [configuration.detectors[0]]
        logger.info(
            "connecting to \(configuration.endpoint)",
            metadata: [
                "worker": "\(configuration.workerID)", "detectors": "\(offered.map(\.name).joined(separator: ","))",
                "protocol": "\(version)",
            ])
        send(configuration.ready(version: version))
    }

    /// Closes the connection and schedules the next one after the backoff. The job held, if
    /// any, is abandoned: the coordinator requeues it.
    /// With `immediately`, the connection did not fail (the coordinator asked for another
    /// protocol version): the next one is opened at once, with no backoff.
    func dropConnection(reason: String, immediately: Bool = false) {
        dealer?.close()
        dealer = nil
        if let held { logger.warning("abandoning job \(held.summary): \(reason)") }
        held = nil
        failures = immediately ? 0 : failures + 1
        let delay = immediately ? .zero : configuration.backoff.delay(afterFailures: failures)
        reconnectAt = clock.now + delay
        logger.warning("\(reason); reconnecting in \(String(format: "%.1f", delay.seconds)) s")
    }

    /// Says goodbye to the coordinator (DISCONNECT, delivered for at most half a second).
    func leave() {
        guard let dealer else { return }
        send(.disconnect(DisconnectBody(reason: "the worker is stopping")))
        try? dealer.set(.linger(.milliseconds(500)))
        dealer.close()
        self.dealer = nil
        logger.info("disconnected from \(configuration.endpoint)")
    }

    /// One turn of the loop: timers, then whatever arrives within `maximumWait`.
    func turn(maximumWait: Duration) throws(ZMQError) {
        let now = clock.now
        // A turn comes at least every `maximumWait`: a longer gap means this process was not
        // running (stopped, or starved on a loaded machine), and the coordinator's silence
        // meanwhile is not the coordinator's fault.
        let stalled = now - lastTurn - maximumWait
        if stalled > configuration.heartbeatInterval { lastReceived += stalled }
        lastTurn = now
        var wait = maximumWait
        if dealer == nil, let reconnectAt {
            if now >= reconnectAt {
                try connect()
            } else {
                wait = min(wait, reconnectAt - now)
            }
        }
        if dealer != nil {
            if now - lastReceived >= configuration.expiry {
                // What has arrived counts, even if not read yet.
                try readCoordinator()
            }
            if dealer != nil && now - lastReceived >= configuration.expiry {
                dropConnection(reason: "nothing from the coordinator for \(String(format: "%.1f", configuration.expiry.seconds)) s")
                return
            }
            if now - lastSent >= configuration.heartbeatInterval {
                send(.heartbeat)
            }
            wait = min(wait, lastSent + configuration.heartbeatInterval - clock.now, lastReceived + configuration.expiry - clock.now)
        }
        var poller = ZMQPoller()
        poller.add(analysis)
        if let dealer { poller.add(dealer) }
        let ready = try poller.poll(timeout: max(wait, .milliseconds(1)))
        if ready.contains(analysis) {
            while let frames = try analysis.tryReceive() { finished(frames) }
        }
        if let dealer, ready.contains(dealer) {
            try readCoordinator()
        }
    }

    /// Handles every message waiting from the coordinator.
    private func readCoordinator() throws(ZMQError) {
        guard let dealer else { return }
        while let socket = self.dealer, socket === dealer {
            let frames: [[UInt8]]
            do throws(ZMQError) {
                guard let received = try socket.tryReceive(maxFrames: configuration.limits.maxFrames) else { break }
                frames = received
            } catch where error.code == ZMQError.messageTooLarge {
                logger.warning("ignoring a message from the coordinator: \(error)")
                continue
            }
            received(frames)
        }
    }

    /// Handles a message from the coordinator.
    private func received(_ frames: [[UInt8]]) {
        lastReceived = clock.now
        markHealthy()
        if !answered {
            answered = true
            failures = 0
            logger.info("connected to \(configuration.endpoint)")
        }
        let message: CoordinatorMessage
        do throws(ProtocolError) {
            message = try CoordinatorMessage(frames: frames, limits: configuration.limits)
        } catch {
            rejected(frames, error: error)
            return
        }
        switch message {
        case .heartbeat:
            break
        case .job(let job, let audio):
            let entry = SongJobEntry(
                job: job.job, attempt: job.attempt, detector: configuration.detectors[0].name, params: job.params)
            accept(
                Order(jobs: [entry], song: job.song, version: .v1, generation: generation), name: job.name,
                source: Self.describe(job.location, audio: audio), message: message)
        case .songJob(let job, let audio):
            accept(
                Order(jobs: job.jobs, song: job.song, version: .v2, generation: generation), name: job.name,
                source: Self.describe(job.location, audio: audio), message: message)
        case .identify(let request):
            // Hashed here, on the thread that heartbeats: the identifier keeps to its time budget.
            let answer = FileIdentifier(roots: configuration.libraryRoots).answer(request)
            logger.debug("identified \(answer.files.filter { $0.sha256 != nil }.count) of \(request.files.count) files")
            send(.identified(answer))
        case .disconnect(let body):
            if let error = body.error, error.code == .unsupportedVersion, version > .v1,
                !(error.supportedVersions ?? []).contains(version.identifier),
                (error.supportedVersions ?? []).contains(ProtocolVersion.v1.identifier)
            {
                version = .v1
                let supported = (error.supportedVersions ?? []).joined(separator: ", ")
                logger.warning("the coordinator speaks only \(supported): offering \(configuration.detectors[0].name) alone from now on")
                dropConnection(reason: "the coordinator asked for \(ProtocolVersion.v1)", immediately: true)
                return
            }
            if let error = body.error {
                logger.error("the coordinator refused this worker: \(error)")
            } else {
                logger.notice("the coordinator said goodbye\(body.reason.map { ": \($0)" } ?? "")")
            }
            dropConnection(reason: "disconnected by the coordinator")
        }
    }

    /// Hands a JOB to the analysis thread, or refuses it when one is running (a worker runs
    /// one JOB at a time).
    /// How a JOB's song comes, for the log: its path below a shared root, or its size.
    private static func describe(_ location: JobLocation?, audio: [UInt8]) -> String {
        location.map { "\($0.root)/\($0.path)" } ?? "\(audio.count) bytes"
    }

    private func accept(_ order: Order, name: String?, source: String, message: CoordinatorMessage) {
        if let held {
            logger.error("job \(order.summary) arrived while job \(held.summary) runs: refused (a worker runs one JOB at a time)")
            send(order.failure(ErrorBody(code: .internal, message: "worker \(configuration.workerID) is busy with job \(held.summary)")))
            return
        }
        var metadata: Logger.Metadata = ["song": "\(order.song)"]
        if let name { metadata["name"] = "\(name)" }
        logger.info("job \(order.summary): \(source)", metadata: metadata)
        handoff.put(message)
        do throws(ZMQError) {
            try analysis.send([[]])
        } catch {
            handoff.withdrawLast()
            logger.error("cannot hand job \(order.summary) to the analysis thread: \(error)")
            send(order.failure(ErrorBody(code: .internal, message: "worker \(configuration.workerID): \(error)")))
            return
        }
        held = order
        dispatched.append(order)
    }

    /// Touches the health file, if any: the coordinator was just heard from.
    private func markHealthy() {
        guard let healthFile = configuration.healthFile else { return }
        do throws(HealthFileError) {
            try healthFile.touch()
            healthFileFailed = false
        } catch {
            if !healthFileFailed { logger.error("\(error)") }
            healthFileFailed = true
        }
    }

    /// A message from the coordinator that does not decode. A JOB whose body is readable gets
    /// a failed RESULT (so the job does not wait for its time limit); anything else is logged.
    private func rejected(_ frames: [[UInt8]], error: ProtocolError) {
        guard frames.count >= 3, frames[1] == Array("JOB".utf8) else {
            logger.warning("ignoring a malformed message from the coordinator: \(error)")
            return
        }
        if frames[0] == ProtocolVersion.v2.frame, let job = try? JSONDecoder().decode(SongJobBody.self, from: Data(frames[2])),
            !job.jobs.isEmpty
        {
            logger.warning("job \(job.jobs.map { String($0.job) }.joined(separator: ", ")) refused: \(error)")
            send(SongJobOutcome(song: job, error: error.body).message)
        } else if let job = try? JSONDecoder().decode(JobBody.self, from: Data(frames[2])) {
            logger.warning("job \(job.job) refused: \(error)")
            send(.result(ResultBody(job: job.job, attempt: job.attempt, error: error.body), envelope: nil))
        } else {
            logger.warning("ignoring a malformed message from the coordinator: \(error)")
        }
    }

    /// Handles a RESULT from the analysis thread: sent if the coordinator still waits for it.
    private func finished(_ frames: [[UInt8]]) {
        guard !dispatched.isEmpty else { return }
        let order = dispatched.removeFirst()
        guard order == held, order.generation == generation, let dealer else {
            logger.info("dropping the result of abandoned job \(order.summary)")
            return
        }
        held = nil
        if frames == [[]] {
            send(order.failure(ErrorBody(
                code: .internal, message: "worker \(configuration.workerID): the analysis thread could not read the job")))
        } else {
            sendFrames(frames, on: dealer, what: "RESULT of job \(order.summary)")
        }
    }

    private func send(_ message: WorkerMessage) {
        guard let dealer else { return }
        do throws(ProtocolError) {
            sendFrames(try message.frames(version: version), on: dealer, what: message.command.rawValue)
        } catch {
            logger.error("cannot encode \(message.command.rawValue): \(error)")
        }
    }

    /// Sends without waiting: a coordinator that cannot take a message now is as good as gone.
    private func sendFrames(_ frames: [[UInt8]], on dealer: ZMQSocket, what: String) {
        do throws(ZMQError) {
            if try dealer.trySend(frames) {
                lastSent = clock.now
            } else {
                logger.warning("could not send \(what): the coordinator does not take messages")
            }
        } catch {
            ResourceLimits.abortIfOutOfMemory(error, logger: logger)
            logger.error("could not send \(what): \(error)")
        }
    }
}
