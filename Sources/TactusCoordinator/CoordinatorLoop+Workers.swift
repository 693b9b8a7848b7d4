import Foundation
import Logging
import TactusDetector
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// The backend: workers' READY, RESULT, HEARTBEAT and DISCONNECT, dispatch, and what happens
/// when a worker dies.
extension CoordinatorLoop {
    /// Decodes a worker's message (``WorkerMessageReader``: the large ones off the loop, each
    /// worker's in order) and handles it.
    func handleBackend(_ frames: [[UInt8]]) {
        guard frames.count > 1 else { return }
        // The worker is alive from its message's arrival, however long the message takes to read.
        workers.refresh(frames[0], expiry: .now + workerExpiry)
        workerMessages.read(frames, then: { [self] frames, decoded in handleWorkerMessage(frames, decoded) })
    }

    private func handleWorkerMessage(_ frames: [[UInt8]], _ decoded: WorkerMessageReader.Decoded) {
        let address = frames[0]
        let message: WorkerMessage
        let version: ProtocolVersion
        switch decoded {
        case .success(let read): (message, version) = read
        case .failure(let error):
            logger.warning("a worker sent an invalid message; disconnecting it", metadata: ["error": "\(error)"])
            sendToWorker(address, .disconnect(DisconnectBody(reason: "protocol error", error: error.body)))
            workerLost(address, reason: "protocol error: \(error)", notify: false)
            return
        }
        switch message {
        case .ready(let body):
            workerReady(
                address, id: body.workerId, offers: [DetectorOffer(detector: body.detector, params: body.params)], roots: body.roots,
                identifies: false, version: version)
            return
        case .offer(let body):
            workerReady(
                address, id: body.workerId, offers: body.detectors, roots: body.roots, identifies: body.identifies == true,
                version: version)
            return
        default: break
        }
        guard workers[address] != nil else {
            // Majordomo: a peer we do not know (we restarted, or purged it) must start over.
            if case .disconnect = message { return }
            sendToWorker(
                address,
                .disconnect(
                    DisconnectBody(
                        reason: "unknown worker", error: ErrorBody(code: .badRequest, message: "send READY first"))),
                version: version)
            return
        }
        workers.refresh(address, expiry: .now + workerExpiry)
        let size = WorkerMessageReader.size(frames)
        switch message {
        case .ready, .offer, .heartbeat: break
        case .identified(let body): workerIdentified(address, body)
        case .disconnect(let body):
            let reason = BoundedText.cut(body.reason ?? "no reason", toScalars: ErrorBody.maxPeerMessageCharacters)
            workerLost(address, reason: "disconnected: \(reason)", notify: true)
        case .result(let body, let envelope):
            // The texts a worker wrote are cut before they are stored, logged or published.
            let answer = body.analysis.map { SongJobAnswer(job: body.job, attempt: body.attempt, analysis: $0) }
                ?? SongJobAnswer(job: body.job, attempt: body.attempt, error: body.error ?? ErrorBody(code: .internal, message: "no analysis"))
            workerResult(
                address, answers: [answer.bounded()], audio: body.audio, envelope: envelope.flatMap { values in
                    body.envelopeHopS.map { EnergyEnvelope(hopS: $0, values: values) }
                }, size: size)
        case .songResult(let body, let envelope):
            workerResult(
                address, answers: body.results.map { $0.bounded() }, audio: body.audio, envelope: envelope.flatMap { values in
                    body.envelopeHopS.map { EnergyEnvelope(hopS: $0, values: values) }
                }, beatGrid: body.beatGrid, song: body.song, size: size)
        }
    }

    /// Disconnects a worker whose message has too many frames to decode.
    func refuseWorkerMessage(_ firstFrames: [[UInt8]], frameCount: Int) {
        guard let address = firstFrames.first else { return }
        let error = ProtocolError.tooManyFrames(
            message: "worker message", limit: configuration.limits.maxFrames, received: frameCount - 1)
        logger.warning("a worker sent an invalid message; disconnecting it", metadata: ["error": "\(error)"])
        sendToWorker(address, .disconnect(DisconnectBody(reason: "protocol error", error: error.body)))
        workerLost(address, reason: "protocol error: \(error)", notify: false)
    }

    /// Different detectors the workers may offer in all.
    static let maxDetectors = 128

    private func workerReady(
        _ address: [UInt8], id: String, offers: [DetectorOffer], roots: [String]?, identifies: Bool, version: ProtocolVersion
    ) {
        if workers[address] != nil {
            sendToWorker(
                address,
                .disconnect(DisconnectBody(reason: "READY twice", error: ErrorBody(code: .badRequest, message: "READY twice"))))
            workerLost(address, reason: "sent READY twice", notify: false)
            return
        }
        var descriptors: [DetectorDescriptor] = []
        for offer in offers {
            do {
                descriptors.append(try offer.detector.descriptor())
            } catch {
                sendToWorker(
                    address, .disconnect(DisconnectBody(reason: "invalid detector declaration", error: error.body)), version: version)
                return
            }
        }
        // Every detector offered is held and listed in `detectors`: workers (anyone who
        // connects, without CURVE) may not make up detectors without end.
        let offered = Set(workers.offered.map(\.descriptor.name) + configuration.knownDetectors.map(\.name))
        let added = Set(descriptors.map(\.name)).subtracting(offered)
        guard offered.count + added.count <= Self.maxDetectors else {
            let message = "the server takes at most \(Self.maxDetectors) different detectors, and \(offered.count) are offered"
            sendToWorker(
                address, .disconnect(DisconnectBody(reason: "too many detectors", error: ErrorBody(code: .tooLarge, message: message))),
                version: version)
            logger.warning("refused a worker: too many detectors", metadata: ["worker": "\(id)", "new": "\(added.count)"])
            return
        }
        for descriptor in descriptors {
            if let known = knownDescriptor(descriptor.name), known.version != descriptor.version {
                logger.warning(
                    "worker offers another version of a detector",
                    metadata: ["worker": "\(id)", "detector": "\(descriptor.name)", "version": "\(descriptor.version)"])
            }
        }
        // A local worker that reconnected (it took the coordinator for gone) has abandoned the
        // job its old connection held: that connection goes now, its job back to the queue,
        // rather than waiting for the job's time limit.
        if coordinator.isWorkerProcessRunning(id),
            let stale = workers.all.first(where: { $0.id == id && $0.address != address })
        {
            workerLost(stale.address, reason: "reconnected", notify: false)
        }
        workers.add(
            ConnectedWorker(
                address: address, id: id, version: version, detectors: descriptors,
                params: Dictionary(offers.map { ($0.detector.name, $0.params) }, uniquingKeysWith: { first, _ in first }),
                expiry: .now + workerExpiry, assignment: nil, roots: Set(roots ?? []), identifies: identifies))
        // Answered at once, not at the next heartbeat tick: a worker gives up on a connection
        // the coordinator has not answered within the liveness, counted from its connect, and a
        // connection that took long to establish (a link coming back) would otherwise be
        // dropped by the worker just after it was registered here, holding a job.
        sendToWorker(address, .heartbeat)
        if churnLog.allows(.joined) {
            logger.info(
                "worker joined",
                metadata: ["worker": "\(id)", "detectors": "\(descriptors.map(\.name).joined(separator: ","))", "protocol": "\(version)"])
        }
        for descriptor in descriptors {
            publish(.workerJoined(WorkerEvent(workerId: id, detector: descriptor.name, version: descriptor.version)))
        }
    }

    /// Removes a worker; its jobs go back to the queue, or fail after their last attempt.
    func workerLost(_ address: [UInt8], reason: String, notify: Bool) {
        guard let worker = workers[address] else { return }
        if notify {
            sendToWorker(address, .disconnect(DisconnectBody(reason: reason)))
        }
        workers.remove(address)
        if churnLog.allows(.lost) {
            logger.warning("worker lost", metadata: ["worker": "\(worker.id)", "reason": "\(reason)"])
        }
        abandonIdentifyRequests(of: address)
        for descriptor in worker.detectors {
            publish(
                .workerLost(WorkerEvent(workerId: worker.id, detector: descriptor.name, version: descriptor.version, reason: reason)))
        }
        guard let assignment = worker.assignment else { return }
        let timedOut = assignment.deadline < .now
        for job in assignment.jobs {
            let failure = AnalysisFailure(
                code: timedOut ? .timeout : .workerLost,
                message: "\(assignment.name): worker \(worker.id) \(reason) during attempt \(job.attempt) "
                    + "of \(configuration.maxAttempts)")
            retryOrFail(job, failure: failure, worker: worker)
        }
    }

    /// A worker whose process was seen to end (``Coordinator/workerProcessEnded(workerID:reason:)``):
    /// lost now, without waiting for its silence to expire.
    func workerEnded(id: String, reason: String) {
        guard let worker = workers.all.first(where: { $0.id == id }) else { return }
        workerLost(worker.address, reason: reason, notify: false)
    }

    /// Queues a job whose attempt was lost again, or fails it after its last attempt.
    private func retryOrFail(_ assigned: AssignedJob, failure: AnalysisFailure, worker: ConnectedWorker) {
        do {
            guard let job = try library.job(assigned.job), job.state == .running, job.attempts == assigned.attempt else {
                return
            }
            if job.attempts >= configuration.maxAttempts {
                finishFailed(job.id, failure: failure, worker: worker, attempts: job.attempts)
            } else {
                try library.requeueJob(job.id)
                pending.requeue(PendingJob(job, lane: clientJobs.lane(of: job.id)))
            }
        } catch {
            logger.error("cannot requeue a job", metadata: ["job": "\(assigned.job)", "error": "\(error)"])
        }
    }

    /// Records a worker's RESULT, `size` bytes on the wire: the answer to each job of its
    /// assignment, stored (or failed, or retried) job by job, so the failure of one detector
    /// redoes none of the others. A version-2 RESULT names its `song`: one that is not the
    /// song of the worker's JOB stores nothing, and its jobs are tried again.
    private func workerResult(
        _ address: [UInt8], answers: [SongJobAnswer], audio: AudioFacts?, envelope: EnergyEnvelope?, beatGrid: BeatGrid? = nil,
        song: SongID? = nil, size: Int
    ) {
        guard let worker = workers[address] else { return }
        guard let assignment = worker.assignment,
            answers.contains(where: { assignment.attempt(of: $0.job) == $0.attempt })
        else {
            let jobs = answers.map { "\($0.job)/\($0.attempt)" }.joined(separator: ",")
            logger.info("discarded a stale result", metadata: ["worker": "\(worker.id)", "jobs": "\(jobs)"])
            return
        }
        workers.release(address)
        if let song, song != assignment.song {
            let failure = AnalysisFailure(
                code: .internal,
                message: "\(assignment.name): worker \(worker.id) answered for song \(song.short), not its JOB's song \(assignment.song.short)")
            for job in assignment.jobs { retryOrFail(job, failure: failure, worker: worker) }
            return
        }
        guard size <= configuration.maxResultBytes else {
            let failure = AnalysisFailure(
                code: .tooLarge,
                message: "the result is \(size) bytes, over the server's limit of \(configuration.maxResultBytes) bytes")
            for job in assignment.jobs { finishFailed(job.job, failure: failure, worker: worker, attempts: job.attempt) }
            return
        }
        var finished: [(job: AssignedJob, analysis: TempoAnalysis)] = []
        for job in assignment.jobs {
            guard let answer = answers.first(where: { $0.job == job.job && $0.attempt == job.attempt }) else {
                let failure = AnalysisFailure(
                    code: .internal,
                    message: "\(assignment.name): worker \(worker.id) did not answer job \(job.job) (\(job.detector))")
                retryOrFail(job, failure: failure, worker: worker)
                continue
            }
            if let error = answer.error {
                finishFailed(
                    job.job, failure: AnalysisFailure(error), worker: worker,
                    attempts: job.attempt)
                continue
            }
            guard var analysis = answer.analysis, analysis.detector == job.detector,
                let descriptor = worker.descriptor(job.detector)
            else {
                let failure = AnalysisFailure(
                    code: .internal, message: "worker \(worker.id) returned an analysis of another detector")
                finishFailed(job.job, failure: failure, worker: worker, attempts: job.attempt)
                continue
            }
            analysis.version = descriptor.version
            finished.append((job, analysis))
        }
        store(finished, song: assignment.song, worker: worker, durationS: audio?.durationS, envelope: envelope, beatGrid: beatGrid)
    }

    /// Stores the successful analyses of one RESULT in one transaction (one new consensus),
    /// publishes `job.done` for each stored, and `song.done` when the song has no job left;
    /// a result the library refuses (out-of-range values) fails its job rather than leaving it running.
    private func store(
        _ finished: [(job: AssignedJob, analysis: TempoAnalysis)], song: SongID, worker: ConnectedWorker, durationS: Double?,
        envelope: EnergyEnvelope?, beatGrid: BeatGrid?
    ) {
        guard !finished.isEmpty else { return }
        let stored: (outcomes: [FinishOutcome], completion: JobCompletion?)
        do {
            stored = try library.finishJobs(
                finished.map { FinishedJob(id: $0.job.job, attempt: $0.job.attempt, result: AnalysisRecord($0.analysis, worker: worker.id)) },
                durationS: durationS, envelope: envelope, beatGrid: beatGrid)
        } catch {
            for (job, _) in finished {
                finishFailed(
                    job.job, failure: AnalysisFailure(code: .internal, message: "cannot store the result: \(error)"),
                    worker: worker, attempts: job.attempt)
            }
            return
        }
        for ((job, analysis), outcome) in zip(finished, stored.outcomes) {
            switch outcome {
            case .stored:
                completions.append(.now)
                clientJobs.end(job.job)
                publish(
                    .jobDone(
                        JobDoneEvent(
                            job: job.job, song: song, detector: analysis.detector, bpm: analysis.bpm,
                            confidence: analysis.confidence)))
            case .stale:
                logger.info("discarded a result for a job no longer running", metadata: ["job": "\(job.job)"])
            case .refused(let error):
                finishFailed(
                    job.job, failure: AnalysisFailure(code: .internal, message: "cannot store the result: \(error)"),
                    worker: worker, attempts: job.attempt)
            }
        }
        if let completion = stored.completion { publishSongDoneIfFinished(song, completion) }
    }

    /// Ends a job as failed, storing a failed analysis so the failure is visible next to the
    /// other detectors' results. `attempts` is what the `job.failed` event counts (by
    /// default the attempts the library holds).
    func finishFailed(_ job: Int64, failure: AnalysisFailure, worker: ConnectedWorker?, attempts: Int? = nil) {
        do {
            guard let record = try library.job(job) else { return }
            let attempts = attempts ?? record.attempts
            let analysis = worker.flatMap { worker in
                worker.descriptor(record.detector).map {
                    AnalysisRecord.failed(
                        detector: record.detector, version: $0.version, params: record.params, failure: failure, worker: worker.id)
                }
            }
            guard let completion = try library.endJob(job, state: .failed, failure: failure, analysis: analysis) else { return }
            if failure.code == .songChanged {
                // A file that does not hold the song it was recorded as (it changed without its
                // size or time showing it, or a worker's IDENTIFY was wrong): the next scan
                // hashes it again.
                try library.rescanLocations(of: record.song)
            }
            _ = pending.remove(job)
            clientJobs.end(job)
            publish(
                .jobFailed(
                    JobFailedEvent(
                        job: job, song: record.song, detector: record.detector, attempts: attempts,
                        error: ErrorBody(failure))))
            publishSongDoneIfFinished(record.song, completion)
        } catch {
            logger.error("cannot record a job failure", metadata: ["job": "\(job)", "error": "\(error)"])
        }
    }

    func publishSongDoneIfFinished(_ song: SongID, _ completion: JobCompletion) {
        guard completion.songFinished else { return }
        // An upload's bytes are kept only until its jobs end (unless the server keeps uploads).
        if !configuration.keepUploads { coordinator.blobs.remove(song) }
        publish(.songDone(SongDoneEvent(song: song, jobs: completion.songJobs.map(JobInfo.init), consensus: completion.consensus)))
    }

    /// Sends queued jobs to idle workers, least recently used first, until either runs out:
    /// one job of each detector in turn (of the client whose turn it is, ``PendingJobs``), and
    /// with it every other queued job of the same song for a detector the chosen worker offers
    /// (one decode of the song for all of them).
    func dispatch() {
        var progress = true
        while progress && pending.count > 0 {
            progress = false
            for detector in workers.detectorsWithIdleWorkers where pending.hasJobs(detector) {
                guard let worker = workers.nextIdle(detector), let first = pending.popFirst(detector) else { continue }
                var jobs = [first]
                if worker.version >= .v2 {
                    jobs += pending.take(
                        song: first.song, lane: first.lane, detectors: worker.detectorNames, limit: SongJobBody.maximumJobs - 1)
                }
                guard send(jobs, to: worker) else { return }
                progress = true
            }
        }
    }

    /// What a JOB carries: the song's location, for a worker that shares its library root (or,
    /// for an upload whose jobs are not over, the blob directory: a local worker opens the blob
    /// itself), or its bytes: its blob, else read from its file below a library root now,
    /// through the safe open, and checked against the song's hash.
    private func jobSource(_ job: PendingJob, for worker: ConnectedWorker) throws(ErrorBody) -> JobSource {
        let locations: [SongLocation]
        do {
            locations = try library.locations(of: job.song).filter { !$0.missing }
        } catch {
            throw ErrorBody(code: .internal, message: "cannot read the song's locations: \(error)")
        }
        if let shared = locations.first(where: { worker.roots.contains($0.root) }) {
            return JobSource(location: JobLocation(root: shared.root, path: shared.path), bytes: [])
        }
        if coordinator.blobs.contains(job.song) {
            if worker.roots.contains(coordinator.blobRoot) {
                return JobSource(location: JobLocation(root: coordinator.blobRoot, path: SongBlobs.relativePath(for: job.song)), bytes: [])
            }
            if let bytes = try? coordinator.blobs.read(job.song) { return JobSource(location: nil, bytes: bytes) }
        }
        var problems = [String]()
        let roots = coordinator.libraryRoots
        for location in locations {
            do throws(LibraryRootsError) {
                let bytes = try roots.open(root: location.root, relative: location.path, named: location.absolutePath).read()
                guard SongID(hashing: bytes) == job.song else {
                    problems.append("\(location.absolutePath): the file changed since it was scanned")
                    continue
                }
                return JobSource(location: nil, bytes: bytes)
            } catch {
                problems.append(error.description)
            }
        }
        guard !problems.isEmpty else {
            throw ErrorBody(
                code: .notFound, message: "\(job.name): the song's bytes are not kept (an upload whose jobs ended) and no file of it is known")
        }
        throw ErrorBody(code: .songChanged, message: problems.joined(separator: "; ") + " (scan again)")
    }

    /// Starts `jobs` (of one song) in the library and sends them to `worker` in one JOB;
    /// false when the library cannot start jobs now (they stay queued for a later pass).
    private func send(_ jobs: [PendingJob], to worker: ConnectedWorker) -> Bool {
        let song = jobs[0].song, name = jobs[0].name
        let source: JobSource
        do {
            source = try jobSource(jobs[0], for: worker)
        } catch {
            for job in jobs {
                finishFailed(job.id, failure: AnalysisFailure(error), worker: nil)
            }
            return true
        }
        var started: [(PendingJob, Int)] = []
        var writable = true
        for (index, job) in jobs.enumerated() {
            do throws(StoreError) {
                started.append((job, try library.startJob(job.id, worker: worker.id)))
            } catch .invalidValue {
                // No longer queued (cancelled meanwhile): nothing to send.
            } catch {
                // The jobs stay queued (the database is locked, say): try again on a later pass.
                logger.error("cannot start a job", metadata: ["job": "\(job.id)", "error": "\(error)"])
                for rest in jobs[index...].reversed() { pending.requeue(rest) }
                writable = false
                break
            }
        }
        if !started.isEmpty {
            let deadline = ContinuousClock.now + .milliseconds(Int64(configuration.jobTimeLimitS * 1000))
            workers.assign(
                worker.address,
                Assignment(
                    song: song, name: name,
                    jobs: started.map { AssignedJob(job: $0.0.id, attempt: $0.1, detector: $0.0.detector) }, deadline: deadline))
            if worker.version >= .v2 {
                let body = SongJobBody(
                    song: song, name: name, timeLimitS: configuration.jobTimeLimitS, envelope: true,
                    jobs: started.map { SongJobEntry(job: $0.0.id, attempt: $0.1, detector: $0.0.detector, params: $0.0.params) },
                    location: source.location)
                sendToWorker(worker.address, .songJob(body, audio: source.bytes))
            } else {
                let (job, attempt) = started[0]
                let body = JobBody(
                    job: job.id, attempt: attempt, song: song, name: name, params: job.params,
                    timeLimitS: configuration.jobTimeLimitS, envelope: true, location: source.location)
                sendToWorker(worker.address, .job(body, audio: source.bytes))
            }
        }
        return writable
    }

    /// Queues again the jobs the library has as running that no connected worker holds: a
    /// result that could not be stored (the library was locked), or a failure that could not
    /// be recorded. Runs every heartbeat, so no job stays stuck once the library is writable.
    func requeueOrphanedJobs() {
        let held = Set(workers.all.flatMap { $0.assignment?.jobs.map(\.job) ?? [] })
        do {
            for job in try library.runningJobs() where !held.contains(job.id) {
                try library.requeueJob(job.id)
                if !pending.contains(job.id) {
                    pending.requeue(PendingJob(job, lane: clientJobs.lane(of: job.id)))
                }
                logger.notice("requeued a job no worker holds", metadata: ["job": "\(job.id)"])
            }
        } catch {
            logger.warning("cannot requeue orphaned jobs yet", metadata: ["error": "\(error)"])
        }
    }

    /// Fails the queued jobs of the detectors no worker has offered for the grace
    /// (``AbandonedDetectors``), at most ``maxAbandonedJobsFailedPerTurn`` at each heartbeat so
    /// that a long queue does not hold the loop.
    func failJobsOfAbandonedDetectors(at now: ContinuousClock.Instant) {
        let available = Set(allDetectorNames)
        var budget = Self.maxAbandonedJobsFailedPerTurn
        for name in abandonedDetectors.due(queued: pending.depths.keys, available: available, at: now) where budget > 0 {
            let failure = AnalysisFailure(
                code: .unknownDetector,
                message: "no worker has offered detector '\(name)' for \(Int(configuration.abandonedDetectorGraceS)) s")
            var failed = 0
            while budget > 0, let job = pending.popFirst(name) {
                finishFailed(job.id, failure: failure, worker: nil)
                failed += 1
                budget -= 1
            }
            logger.warning(
                "failed queued jobs of a detector no worker offers any more",
                metadata: ["detector": "\(name)", "jobs": "\(failed)", "left": "\(pending.depths[name] ?? 0)"])
        }
    }

    /// The most queued jobs of abandoned detectors failed at one heartbeat.
    static let maxAbandonedJobsFailedPerTurn = 500

    func knownDescriptor(_ name: String) -> DetectorDescriptor? {
        configuration.knownDetectors.first { $0.name == name }
    }
}

/// The song of a JOB: its location for the worker to open, or its bytes.
struct JobSource {
    var location: JobLocation?
    var bytes: [UInt8]
}
