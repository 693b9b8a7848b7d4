import Foundation
import Logging
import TactusDetector
import TactusLibraryService
import TactusProtocol
import TactusStore
import TactusZMQ

/// The coordinator's poll loop and everything it owns: the three sockets, the connected
/// workers and the in-memory mirror of the queue. Lives on the thread that runs it.
final class CoordinatorLoop {
    let coordinator: Coordinator
    let frontend: ZMQSocket
    let backend: ZMQSocket
    let publisher: ZMQSocket
    /// Who may connect: the ZAP handler, with the connections each peer holds and, with
    /// CURVE, the authorized keys.
    let admission: ConnectionAdmission
    let endpoints: BoundEndpoints
    var clientJobs = ClientJobs()
    /// The threads that answer reads of the library off the loop: the small ones (a job, a
    /// song's result, a page of songs), and the bulk ones (``isBulk(_:)``: comparisons,
    /// playlists, long pages), which have threads of their own so that a small read never
    /// waits behind them.
    let reads: BackgroundWork
    let bulkReads: BackgroundWork
    /// The threads that take the slow steps of submissions off the loop.
    let intake: BackgroundWork
    /// Decodes the workers' messages, the large ones off the loop.
    let workerMessages: WorkerMessageReader
    /// The threads of the services added to the configuration (``CommandService``), which may
    /// take seconds: never a read thread.
    let serviceWork: BackgroundWork
    /// The cadence of recordings, with the threads that wait for it.
    let cadence: CadenceService
    /// The renders of `stretch`, with their state and thread.
    let renders: RenderService

    /// The handler of each command clients may send.
    let routes: RequestRoutes
    /// The scans waiting and running.
    let scans = ScanService()
    /// The songs being uploaded in chunks, with the thread that writes them.
    let uploads: UploadService
    /// Workers a message could not be queued for (they do not read theirs): lost at the next tick.
    var unreadingWorkers = Set<[UInt8]>()
    /// Answers dropped because their client's queue was full, and when that was last logged.
    var droppedAnswers = 0
    var lastDroppedAnswersLog: ContinuousClock.Instant?
    /// Which worker join and loss lines are written (a few per 10 s, then a count).
    var churnLog = WorkerChurnLog()
    var workers = WorkerRegistry()
    var pending = PendingJobs()
    /// The plugin detectors whose last worker left while jobs of theirs were queued.
    var abandonedDetectors: AbandonedDetectors
    /// The IDENTIFY requests sent to workers and not answered yet, by number.
    var identifyRequests: [Int64: IdentifyRequest] = [:]
    var nextIdentifyRequest: Int64 = 1
    /// Submissions are refused once a stop was asked for.
    var accepting = true
    /// Completed jobs, for the jobs-per-second figure of `status`.
    var completions: [ContinuousClock.Instant] = []
    /// The heap trimmed after bursts of client messages.
    var heap = HeapTrim()
    let started = ContinuousClock.now
    private var nextHeartbeat = ContinuousClock.now

    var configuration: CoordinatorConfiguration { coordinator.configuration }
    var library: Library { coordinator.library }
    /// Answers the reads of the library (and `truth`), with the names a server accepts.
    var service: LibraryService { LibraryService(library: coordinator.library) }
    var logger: Logger { coordinator.logger }
    var heartbeatInterval: Duration { .milliseconds(Int64(configuration.heartbeatIntervalS * 1000)) }
    var workerExpiry: Duration { heartbeatInterval * configuration.liveness }

    init(coordinator: Coordinator, context: ZMQContext) throws {
        self.coordinator = coordinator
        let configuration = coordinator.configuration
        let limits = configuration.limits
        reads = try BackgroundWork(threads: 2, name: "tactus-reads")
        bulkReads = try BackgroundWork(threads: 2, name: "tactus-bulk-reads")
        // A submission waits mostly on the disk (file creation, fsync), so more threads than
        // cores keep submissions flowing without taking CPU from the loop.
        intake = try BackgroundWork(threads: 4, name: "tactus-intake")
        workerMessages = try WorkerMessageReader(limits: limits)
        abandonedDetectors = AbandonedDetectors(grace: .milliseconds(Int64(configuration.abandonedDetectorGraceS * 1000)))
        renders = try RenderService(coordinator: coordinator)
        serviceWork = try BackgroundWork(threads: configuration.services.isEmpty ? 1 : 4, name: "tactus-services")
        uploads = try UploadService(configuration: configuration, logger: coordinator.logger)
        cadence = try CadenceService(coordinator: coordinator, uploads: uploads)
        routes = try Self.routes(coordinator, services: [
            SubmitService(coordinator: coordinator, uploads: uploads), renders, uploads, scans, cadence, TagsService(coordinator: coordinator),
        ])
        frontend = try context.socket(.router)
        backend = try context.socket(.router)
        publisher = try context.socket(.pub)
        admission = try ConnectionAdmission(
            sockets: [(frontend, .client), (backend, .worker), (publisher, .client)], security: configuration.security,
            connectionsPerPeer: configuration.maxConnectionsPerPeer, workerConnections: configuration.maxWorkerConnections,
            context: context, logger: coordinator.logger)
        // libzmq receives a whole message before the loop sees it, and holds as many as
        // connections send: a client's frames are kept small (large songs and recordings come
        // as uploads, in chunks), and each connection may have only a few messages waiting
        // (libzmq then stops reading it until the loop has taken them), so that many large
        // messages at once cannot take the coordinator's memory. A larger frame drops its
        // connection as soon as its size is read.
        try frontend.set(.maxMessageSize(configuration.maxClientFrameBytes))
        try frontend.set(.receiveHighWaterMark(Self.messagesWaitingPerClient))
        // The same for workers, whose frames are at most a RESULT's.
        try backend.set(.maxMessageSize(configuration.maxWorkerFrameBytes))
        try backend.set(.receiveHighWaterMark(Self.messagesWaitingPerWorker))
        // Anyone may connect to either socket (without CURVE), so a connection that stops
        // sending in the middle of a frame (its bytes so far held by the coordinator: a client
        // frame's megabyte, hundreds of connections) is dropped: ZMTP's PING, answered by
        // libzmq itself, must be answered within ``unansweredPingTimeout`` (a frame in progress
        // holds the answer back).
        for socket in [frontend, backend] {
            try socket.set(.heartbeatInterval(Self.pingInterval))
            try socket.set(.heartbeatTimeout(Self.unansweredPingTimeout))
            try socket.set(.routerMandatory(true))
            try socket.set(.linger(.milliseconds(500)))
        }
        try publisher.set(.linger(.milliseconds(500)))
        // Subscribers send only subscriptions, which libzmq files in a tree on the loop's thread
        // (tens of bytes of memory per byte of topic): a topic is at most a song id, `worker:`
        // and a detector's name, or `scan`, so a longer one drops its connection unread.
        try publisher.set(.maxMessageSize(Self.maxSubscriptionBytes))
        try publisher.set(.sendHighWaterMark(Self.eventsWaitingPerSubscriber))
        try publisher.set(.receiveHighWaterMark(Self.subscriptionsWaitingPerSubscriber))
        let sockets = [frontend, backend, publisher]
        try Self.bind(sockets, to: [configuration.frontend, configuration.backend, configuration.events], failure: "cannot bind")
        var endpoints = BoundEndpoints(
            frontend: try frontend.lastEndpoint, backend: try backend.lastEndpoint, events: try publisher.lastEndpoint)
        if let directory = configuration.localEndpointsDirectory {
            let local = BoundEndpoints.LocalEndpoints(directory: directory)
            try Self.bind(sockets, to: [local.frontend, local.backend, local.events], failure: "cannot bind the local sockets in \(directory)")
            endpoints.local = local
        }
        self.endpoints = endpoints

        for job in try coordinator.library.recoverJobs() {
            pending.append(PendingJob(job))
        }
        logger.info(
            "coordinator listening",
            metadata: [
                "frontend": "\(endpoints.frontend)", "backend": "\(endpoints.backend)", "events": "\(endpoints.events)",
                "queued": "\(pending.count)", "curve": "\(admission.requiresKeys)",
            ])
    }

    /// Binds each socket to its endpoint.
    private static func bind(_ sockets: [ZMQSocket], to endpoints: [String], failure: String) throws(CoordinatorError) {
        do {
            for (socket, endpoint) in zip(sockets, endpoints) { try socket.bind(endpoint) }
        } catch {
            throw CoordinatorError(message: "\(failure): \(error)")
        }
    }

    /// The routes of every command of the configuration's table: the coordinator's own, then
    /// the added services'.
    ///
    /// - Throws: when a command of the table has no route, or a service's command is not in
    ///   the table.
    static func routes(_ coordinator: Coordinator, services: [any RequestService]) throws(CoordinatorError) -> RequestRoutes {
        let configuration = coordinator.configuration
        var routes = RequestRoutes()
        routeLibraryRequests(into: &routes)
        for service in services { service.route(into: &routes) }
        for service in configuration.services {
            let command = service.commandName
            guard configuration.commands[command] != nil else {
                throw CoordinatorError(message: "a service answers '\(command)', which is not in the coordinator's command table")
            }
            guard routes.handler(for: command) == nil else {
                throw CoordinatorError(message: "two services answer '\(command)'")
            }
            service.route(into: &routes)
        }
        let unrouted = Set(configuration.commands.names).subtracting(routes.commands)
        guard unrouted.isEmpty else {
            throw CoordinatorError(message: "no service answers \(unrouted.sorted().joined(separator: ", "))")
        }
        return routes
    }

    /// Serves until a stop is requested and the running jobs are over (or the grace period
    /// has passed).
    func serve() throws {
        var poller = ZMQPoller()
        poller.add(frontend)
        poller.add(backend)
        if let zap = admission.socket { poller.add(zap) }
        for events in admission.connectionEvents { poller.add(events) }
        // The events socket is never readable, but libzmq handles a socket's connections and
        // disconnections only when the socket is used: polled, it frees those of subscribers
        // that left without waiting for the next event (17 KB each, which grew without bound
        // on an idle server whose subscribers came and went).
        poller.add(publisher)
        for pool in [reads, bulkReads, intake, workerMessages.work, renders.work, cadence.work, serviceWork, uploads.writes] {
            poller.add(readableDescriptor: pool.doorbell.descriptor)
        }
        var stopDeadline: ContinuousClock.Instant?
        var lastTurn = ContinuousClock.now
        while true {
            // A turn comes at least every 100 ms (the poll's timeout) plus the work of a turn; a
            // far longer gap means this process was not running (stopped, or starved on a loaded
            // machine): the workers' silence meanwhile is not theirs.
            let gap = ContinuousClock.now - lastTurn
            if gap > heartbeatInterval {
                workers.postponeExpiries(by: gap)
                postponeIdentifyDeadlines(by: gap)
            }
            lastTurn = .now
            if coordinator.isStopRequested && stopDeadline == nil {
                accepting = false
                stopDeadline = .now + .milliseconds(Int64(configuration.shutdownGraceS * 1000))
                logger.info("stopping: no new submissions; waiting for running jobs", metadata: ["running": "\(runningCount)"])
            }
            if let stopDeadline,
                runningCount == 0 && reads.inFlight + bulkReads.inFlight + intake.inFlight + cadence.work.inFlight + serviceWork.inFlight + uploads.writes.inFlight == 0 && identifyRequests.isEmpty || ContinuousClock.now >= stopDeadline
            {
                disconnectAllWorkers()
                scans.answerStopping()
                return
            }
            if coordinator.takeReloadRequest() { admission.reloadKeys() }
            for ended in coordinator.takeEndedWorkers() {
                workerEnded(id: ended.workerID, reason: ended.reason)
            }
            if let watched = coordinator.takeWatchedPaths() { scans.watched(watched.isEmpty ? nil : watched, loop: self) }
            let ready = try poller.poll(timeout: .milliseconds(100))
            // Connections past a limit are shut down as soon as they are accepted.
            if admission.connectionEvents.contains(where: { ready.contains($0) }) { admission.readConnectionEvents() }
            if let zap = admission.socket, ready.contains(zap) { admission.answerRequests() }
            // Answers to reads go out between the other steps: a client waits on each.
            if ready.contains(readableDescriptor: reads.doorbell.descriptor) { reads.deliver() }
            if ready.contains(backend) { readBackend() }
            reads.deliverIfFinished()
            if ready.contains(frontend) {
                drain(frontend, handler: { [self] message in
                    heap.received(message.frames)
                    handleFrontend(message.frames, userID: message.userID, peerAddress: message.peerAddress)
                }, tooManyFrames: refuseClientMessage)
            }
            reads.deliverIfFinished()
            if ready.contains(readableDescriptor: bulkReads.doorbell.descriptor) { bulkReads.deliver() }
            if ready.contains(readableDescriptor: intake.doorbell.descriptor) { intake.deliver() }
            if ready.contains(readableDescriptor: workerMessages.work.doorbell.descriptor) { workerMessages.work.deliver() }
            if ready.contains(readableDescriptor: renders.work.doorbell.descriptor) { renders.work.deliver() }
            if ready.contains(readableDescriptor: cadence.work.doorbell.descriptor) { cadence.work.deliver() }
            if ready.contains(readableDescriptor: serviceWork.doorbell.descriptor) { serviceWork.deliver() }
            if ready.contains(readableDescriptor: uploads.writes.doorbell.descriptor) { uploads.writes.deliver() }
            tick()
            dispatch()
        }
    }

    /// Messages handled from one socket in one turn of the loop: enough to keep up, few enough
    /// that neither socket starves the other and answers to reads go out in between.
    static let messagesPerTurn = 8

    /// The time one socket's messages may take in one turn of the loop: past it the turn ends
    /// after the message in hand, so that messages whose bodies are slow to read (a megabyte of
    /// JSON takes a tenth of a second) do not hold the answers to reads back eight at a time.
    static let turnTime: Duration = .milliseconds(20)

    /// Messages of one client connection that libzmq holds for the loop (`ZMQ_RCVHWM`); beyond
    /// them it reads no more from that connection until the loop has taken some. A client waits
    /// for each answer (or sends a request again after a timeout), so two are enough.
    static let messagesWaitingPerClient = 2

    /// Messages of one worker connection that libzmq holds for the loop (`ZMQ_RCVHWM`): a
    /// worker sends a RESULT after each JOB and a HEARTBEAT now and then.
    static let messagesWaitingPerWorker = 2

    /// How often libzmq sends ZMTP's PING on each client and worker connection, and how long it
    /// waits for anything from the peer before dropping the connection: a peer stalled in the
    /// middle of a frame (holding the frame's bytes so far in the coordinator) is dropped,
    /// whereas 30 s is over 10 times what a worker's largest honest RESULT (about 3 MB for a
    /// 2-hour song) takes on a 10 Mbit/s link, and a client's largest frame (1 MiB) is smaller.
    static let pingInterval: Duration = .seconds(5)
    static let unansweredPingTimeout: Duration = .seconds(30)

    /// The largest subscription the events socket takes (`ZMQ_MAXMSGSIZE`): one byte of
    /// (un)subscription and a topic, whose longest form is `worker:` and a detector's name.
    static let maxSubscriptionBytes = 256

    /// Events libzmq holds for a subscriber that does not read them (`ZMQ_SNDHWM`); newer ones
    /// are dropped for it. An event is at most tens of kilobytes (a worker's texts are cut, a
    /// `scan.progress` lists 64 KiB of skipped files), so such a subscriber costs a few MiB.
    static let eventsWaitingPerSubscriber = 256

    /// Subscriptions of one subscriber connection that libzmq holds before filing them
    /// (`ZMQ_RCVHWM`), so that one flood is filed a few at a time.
    static let subscriptionsWaitingPerSubscriber = 16

    /// Handles the messages waiting on `socket`, at most ``messagesPerTurn`` and for about
    /// ``turnTime`` (the rest wait for the next turn, which comes at once: the poll sees them). The handler gets each
    /// message with the `User-Id` the ZAP handler gave its sender (the sender's CURVE public
    /// key in Z85), nil without CURVE.
    ///
    /// A message with more frames than the limit (plus the routing id and delimiter) is not
    /// decoded: `tooManyFrames` answers it from its first frames and its frame count.
    ///
    /// `bytesAfter` gives, for a message's first frame (its sender's routing id), the most
    /// bytes its other frames may have: a larger message is not copied, and reaches the handler
    /// with its first frame alone (``ReceivedMessage/bytesLeftOut``).
    ///
    /// - Returns: false when the socket had no more messages waiting.
    @discardableResult
    private func drain(
        _ socket: ZMQSocket, bytesAfter: ([UInt8]) -> Int = { _ in .max }, handler: (ReceivedMessage) -> Void,
        tooManyFrames: ([[UInt8]], Int) -> Void
    ) -> Bool {
        let keep = configuration.limits.maxFrames + 2
        let turnEnds = ContinuousClock.now + Self.turnTime
        for _ in 0..<Self.messagesPerTurn {
            do {
                guard let message = try socket.tryReceive(keepingAtMost: keep, bytesAfter: bytesAfter) else { return false }
                if message.frameCount > keep {
                    tooManyFrames(message.frames, message.frameCount)
                } else {
                    handler(message)
                }
            } catch {
                logger.warning("dropped an unreadable message", metadata: ["error": "\(error)"])
            }
            if ContinuousClock.now > turnEnds { break }
        }
        return true
    }

    /// Handles every message waiting from workers (at most a few thousand): before a worker is
    /// taken for silent, the heartbeats that have arrived must count, even those the loop has
    /// not read yet because it was slow (a long commit, a thread starved on a loaded machine).
    func drainBackend() {
        for _ in 0..<512 {
            guard readBackend() else { return }
        }
    }

    /// Handles the workers' messages waiting, as ``drain(_:bytesAfter:handler:tooManyFrames:)``
    /// does; a message larger than its sender may send now
    /// (``WorkerMessageReader/largestMessage(registered:running:limits:)``) is dropped uncopied.
    /// False when none is left.
    @discardableResult
    private func readBackend() -> Bool {
        drain(
            backend,
            bytesAfter: { [self] address in
                let worker = workers[address]
                return WorkerMessageReader.largestMessage(
                    registered: worker != nil, running: worker?.assignment != nil, limits: configuration.limits)
            },
            handler: { [self] message in
                heap.received(bytes: message.bytesLeftOut + WorkerMessageReader.size(message.frames))
                if message.bytesLeftOut > 0 {
                    workerMessages.dropped(.unexpected, bytes: message.bytesLeftOut)
                } else {
                    handleBackend(message.frames)
                }
            }, tooManyFrames: refuseWorkerMessage)
    }

    /// The purge of dead workers, on every turn (a worker is dead once its expiry has passed,
    /// not at the next heartbeat), and heartbeats, at most once per heartbeat interval.
    ///
    /// A worker is silent only once every message that has arrived from it is read, and a
    /// local worker whose process runs is not silent while its job is within its time limit
    /// (``WorkerRegistry/expired(at:processRunning:)``).
    private func tick() {
        var now = ContinuousClock.now
        let running: (ConnectedWorker) -> Bool = { [coordinator] in coordinator.isWorkerProcessRunning($0.id) }
        if !workers.expired(at: now, processRunning: running).isEmpty {
            drainBackend()
            now = .now
        }
        for (worker, reason) in workers.expired(at: now, processRunning: running) {
            workerLost(worker.address, reason: reason, notify: true)
        }
        for address in unreadingWorkers {
            workerLost(address, reason: "does not read its messages (its queue is full)", notify: false)
        }
        unreadingWorkers.removeAll()
        if let drops = workerMessages.takeDrops(at: now) {
            for (reason, drop) in drops.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                logger.warning(
                    "dropped workers' messages unread", metadata: ["reason": "\(reason.rawValue)", "messages": "\(drop.count)", "bytes": "\(drop.bytes)"])
            }
        }
        expireIdentifyRequests(at: now)
        if let unwritten = churnLog.summary(at: now) {
            logger.warning(
                "workers join and leave fast: some joins and losses were not logged one by one",
                metadata: ["joined": "\(unwritten.joined)", "lost": "\(unwritten.lost)", "seconds": "\(WorkerChurnLog.window.components.seconds)"])
        }
        guard now >= nextHeartbeat else { return }
        nextHeartbeat = now + heartbeatInterval
        for worker in workers.all {
            sendToWorker(worker.address, .heartbeat)
        }
        requeueOrphanedJobs()
        failJobsOfAbandonedDetectors(at: now)
        uploads.expire(at: now)
        heap.connectionsDropped(admission.takeDroppedConnections())
        heap.trimIfDue()
        let cutoff = now - .seconds(60)
        completions.removeAll { $0 < cutoff }
    }

    var runningCount: Int { workers.all.filter { $0.assignment != nil }.count }

    private func disconnectAllWorkers() {
        for worker in workers.all {
            sendToWorker(worker.address, .disconnect(DisconnectBody(reason: "coordinator stopping")))
        }
    }

    // MARK: Sending

    /// Sends `message` to a worker in the version it speaks (`version` for a peer not
    /// registered, by default version 1).
    ///
    /// Never waits: a worker whose queue is full (it does not read its messages) is lost at the
    /// loop's next turn, its jobs tried again elsewhere. (A ROUTER with router-mandatory would
    /// otherwise wait for that peer for ever, and the whole loop with it.)
    func sendToWorker(_ address: [UInt8], _ message: CoordinatorMessage, version: ProtocolVersion? = nil) {
        do {
            if try !backend.trySend([address] + message.frames(version: version ?? workers[address]?.version ?? .v1)),
                workers[address] != nil
            {
                unreadingWorkers.insert(address)
            }
        } catch {
            // A worker that vanished (router-mandatory EHOSTUNREACH) is purged by its expiry.
            logger.debug("cannot send to a worker", metadata: ["error": "\(error)"])
        }
    }

    /// Answers a client. Never waits: a client whose queue is full (it sends requests and does
    /// not read the answers) loses this answer rather than stopping the loop.
    func reply(_ envelope: ClientEnvelope, _ reply: ClientReply) {
        do {
            if try !frontend.trySend(envelope.wrap(Self.framesWithinBodyLimit(reply))) {
                droppedAnswers += 1
                if lastDroppedAnswersLog.map({ ContinuousClock.now - $0 > .seconds(10) }) ?? true {
                    lastDroppedAnswersLog = .now
                    logger.warning(
                        "a client does not read its answers: answers dropped", metadata: ["dropped": "\(droppedAnswers)"])
                }
            }
        } catch {
            logger.debug("cannot answer a client", metadata: ["error": "\(error)"])
        }
    }

    /// The frames of `reply`, or of a `too-large` error in its place when its body is over
    /// what a client accepts (``ProtocolLimits/maxBodyBytes`` of the standard limits): an
    /// answer a client cannot read would leave it with "unreadable reply" and nothing to do.
    static func framesWithinBodyLimit(_ reply: ClientReply) throws(ProtocolError) -> [[UInt8]] {
        let frames = try reply.frames()
        let limit = ProtocolLimits.standard.maxBodyBytes
        // Frames: identifier, command, request id, status, body, then binary frames.
        guard frames.count > 4, frames[4].count > limit else { return frames }
        let refusal = ErrorBody(
            code: .tooLarge,
            message: "the answer to '\(reply.command)' would be \(frames[4].count) bytes, over the \(limit) bytes a reply may carry "
                + "(what the request changed, if anything, is done): ask for less (a lower limit, a narrower range or fewer songs)")
        return try ClientReply(requestID: reply.requestID, command: reply.command, error: refusal).frames()
    }

    func publish(_ event: Event) {
        do {
            try publisher.send(event.frames())
        } catch {
            logger.warning("cannot publish an event", metadata: ["event": "\(event.name.rawValue)", "error": "\(error)"])
        }
    }
}
