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
    func handleBackend(_ frames: [[UInt8]]) {
        guard let address = frames.first, frames.count > 1 else { return }
        let message: WorkerMessage
        do {
            message = try WorkerMessage(frames: Array(frames.dropFirst()), limits: configuration.limits)
        } catch {
            logger.warning("a worker sent an invalid message; disconnecting it", metadata: ["error": "\(error)"])
            sendToWorker(address, .disconnect(DisconnectBody(reason: "protocol error", error: error.body)))
            workerLost(address, reason: "protocol error: \(error)", notify: false)
            return
        }
        if case .ready(let body) = message {
            workerReady(address, body)
            return
        }
        guard workers[address] != nil else {
            // Majordomo: a peer we do not know (we restarted, or purged it) must start over.
            if case .disconnect = message { return }
            sendToWorker(
                address,
                .disconnect(
                    DisconnectBody(
                        reason: "unknown worker", error: ErrorBody(code: .badRequest, message: "send READY first"))))
            return
        }
        workers.refresh(address, expiry: .now + workerExpiry)
        switch message {
        case .ready: break
        case .heartbeat: break
        case .disconnect(let body):
            workerLost(address, reason: "disconnected: \(body.reason ?? "no reason")", notify: true)
        case .result(let body, let envelope):
            let size = frames.dropFirst().reduce(0) { $0 + $1.count }
            workerResult(address, body, envelope: envelope, size: size)
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

    private func workerReady(_ address: [UInt8], _ body: ReadyBody) {
        if workers[address] != nil {
            sendToWorker(
                address,
                .disconnect(DisconnectBody(reason: "READY twice", error: ErrorBody(code: .badRequest, message: "READY twice"))))
            workerLost(address, reason: "sent READY twice", notify: false)
            return
        }
        let descriptor: DetectorDescriptor
        do {
            descriptor = try body.detector.descriptor()
        } catch {
            sendToWorker(address, .disconnect(DisconnectBody(reason: "invalid detector declaration", error: error.body)))
            return
        }
        if let known = knownDescriptor(descriptor.name), known.version != descriptor.version {
            logger.warning(
                "worker offers another version of a detector",
                metadata: ["worker": "\(body.workerId)", "detector": "\(descriptor.name)", "version": "\(descriptor.version)"])
        }
        // A local worker that reconnected (it took the coordinator for gone) has abandoned the
        // job its old connection held: that connection goes now, its job back to the queue,
        // rather than waiting for the job's time limit.
        if coordinator.isWorkerProcessRunning(body.workerId),
            let stale = workers.all.first(where: { $0.id == body.workerId && $0.address != address })
        {
            workerLost(stale.address, reason: "reconnected", notify: false)
        }
        workers.add(
            ConnectedWorker(
                address: address, id: body.workerId, detector: descriptor, params: body.params,
                expiry: .now + workerExpiry, assignment: nil, roots: Set(body.roots ?? [])))
        // Answered at once, not at the next heartbeat tick: a worker gives up on a connection
        // the coordinator has not answered within the liveness, counted from its connect, and a
        // connection that took long to establish (a link coming back) would otherwise be
        // dropped by the worker just after it was registered here, holding a job.
        sendToWorker(address, .heartbeat)
        logger.info("worker joined", metadata: ["worker": "\(body.workerId)", "detector": "\(descriptor.name)"])
        publish(.workerJoined(WorkerEvent(workerId: body.workerId, detector: descriptor.name, version: descriptor.version)))
    }

    /// Removes a worker; its job goes back to the queue, or fails after its last attempt.
    func workerLost(_ address: [UInt8], reason: String, notify: Bool) {
        guard let worker = workers.remove(address) else { return }
        logger.warning("worker lost", metadata: ["worker": "\(worker.id)", "reason": "\(reason)"])
        if notify {
            sendToWorker(address, .disconnect(DisconnectBody(reason: reason)))
        }
        publish(
            .workerLost(
                WorkerEvent(workerId: worker.id, detector: worker.detector.name, version: worker.detector.version, reason: reason)))
        guard let assignment = worker.assignment else { return }
        let timedOut = assignment.deadline < .now
        let failure = AnalysisFailure(
            code: (timedOut ? ErrorCode.timeout : ErrorCode.workerLost).rawValue,
            message: "\(assignment.name): worker \(worker.id) \(reason) during attempt \(assignment.attempt) "
                + "of \(configuration.maxAttempts)")
        retryOrFail(assignment, failure: failure, worker: worker)
    }

    /// A worker whose process was seen to end (``Coordinator/workerProcessEnded(workerID:reason:)``):
    /// lost now, without waiting for its silence to expire.
    func workerEnded(id: String, reason: String) {
        guard let worker = workers.all.first(where: { $0.id == id }) else { return }
        workerLost(worker.address, reason: reason, notify: false)
    }

    private func retryOrFail(_ assignment: Assignment, failure: AnalysisFailure, worker: ConnectedWorker) {
        do {
            guard let job = try library.job(assignment.job), job.state == .running, job.attempts == assignment.attempt else {
                return
            }
            if job.attempts >= configuration.maxAttempts {
                finishFailed(job.id, failure: failure, worker: worker, attempts: job.attempts)
            } else {
                try library.requeueJob(job.id)
                pending.requeue(PendingJob(job))
            }
        } catch {
            logger.error("cannot requeue a job", metadata: ["job": "\(assignment.job)", "error": "\(error)"])
        }
    }

    /// Records a worker's RESULT, `size` bytes on the wire.
    private func workerResult(_ address: [UInt8], _ body: ResultBody, envelope: [Float]?, size: Int) {
        guard let worker = workers[address] else { return }
        guard let assignment = worker.assignment, assignment.job == body.job, assignment.attempt == body.attempt else {
            logger.info(
                "discarded a stale result", metadata: ["worker": "\(worker.id)", "job": "\(body.job)", "attempt": "\(body.attempt)"])
            return
        }
        workers.release(address)
        guard size <= configuration.maxResultBytes else {
            let failure = AnalysisFailure(
                code: ErrorCode.tooLarge.rawValue,
                message: "the result is \(size) bytes, over the server's limit of \(configuration.maxResultBytes) bytes")
            finishFailed(body.job, failure: failure, worker: worker, attempts: body.attempt)
            return
        }
        if let error = body.error {
            finishFailed(
                body.job, failure: AnalysisFailure(code: error.code.rawValue, message: error.message), worker: worker,
                attempts: body.attempt)
            return
        }
        guard var analysis = body.analysis, analysis.detector == worker.detector.name else {
            let failure = AnalysisFailure(
                code: ErrorCode.internal.rawValue, message: "worker \(worker.id) returned an analysis of another detector")
            finishFailed(body.job, failure: failure, worker: worker, attempts: body.attempt)
            return
        }
        analysis.version = worker.detector.version
        var envelopeValue: EnergyEnvelope?
        if let envelope, let hop = body.envelopeHopS {
            envelopeValue = EnergyEnvelope(hopS: hop, values: envelope)
        }
        do {
            guard
                let completion = try library.finishJob(
                    body.job, attempt: body.attempt, result: AnalysisRecord(analysis, worker: worker.id),
                    durationS: body.audio?.durationS, envelope: envelopeValue)
            else {
                logger.info("discarded a result for a job no longer running", metadata: ["job": "\(body.job)"])
                return
            }
            completions.append(.now)
            clientJobs.end(body.job)
            publish(
                .jobDone(
                    JobDoneEvent(
                        job: body.job, song: assignment.song, detector: analysis.detector, bpm: analysis.bpm,
                        confidence: analysis.confidence)))
            publishSongDoneIfFinished(assignment.song, completion)
        } catch {
            // A result the library refuses (out-of-range values) fails the job rather than
            // leaving it running.
            finishFailed(
                body.job, failure: AnalysisFailure(code: ErrorCode.internal.rawValue, message: "cannot store the result: \(error)"),
                worker: worker, attempts: body.attempt)
        }
    }

    /// Ends a job as failed, storing a failed analysis so the failure is visible next to the
    /// other detectors' results.
    func finishFailed(_ job: Int64, failure: AnalysisFailure, worker: ConnectedWorker?, attempts: Int) {
        do {
            guard let record = try library.job(job) else { return }
            let analysis = worker.map {
                AnalysisRecord.failed(
                    detector: record.detector, version: $0.detector.version, params: record.params, failure: failure, worker: $0.id)
            }
            guard let completion = try library.endJob(job, state: .failed, failure: failure, analysis: analysis) else { return }
            _ = pending.remove(job)
            clientJobs.end(job)
            publish(
                .jobFailed(
                    JobFailedEvent(
                        job: job, song: record.song.hex, detector: record.detector, attempts: attempts,
                        error: ErrorBody(code: ErrorCode(rawValue: failure.code), message: failure.message))))
            publishSongDoneIfFinished(record.song.hex, completion)
        } catch {
            logger.error("cannot record a job failure", metadata: ["job": "\(job)", "error": "\(error)"])
        }
    }

    func publishSongDoneIfFinished(_ song: String, _ completion: JobCompletion) {
        guard completion.songFinished else { return }
        // An upload's bytes are kept only until its jobs end (unless the server keeps uploads).
        if !configuration.keepUploads, SongBlobs.isValidID(song) { coordinator.blobs.remove(song) }
        publish(.songDone(SongDoneEvent(song: song, jobs: completion.songJobs.map(JobInfo.init), consensus: completion.consensus)))
    }

    /// Sends queued jobs to idle workers, least recently used first, until either runs out.
    func dispatch() {
        guard pending.count > 0 else { return }
        for detector in workers.detectorsWithIdleWorkers {
            while let job = pending.popFirst(detector) {
                let deadline = ContinuousClock.now + .milliseconds(Int64(configuration.jobTimeLimitS * 1000))
                guard
                    let worker = workers.assign(
                        detector,
                        Assignment(job: job.id, attempt: 0, song: job.song, name: job.name, detector: detector, deadline: deadline))
                else {
                    pending.requeue(job)
                    break
                }
                let source: JobSource
                do {
                    source = try jobSource(job, for: worker)
                } catch {
                    workers.release(worker.address)
                    finishFailed(job.id, failure: AnalysisFailure(code: error.code.rawValue, message: error.message), worker: nil, attempts: 0)
                    continue
                }
                do throws(StoreError) {
                    let attempt = try library.startJob(job.id, worker: worker.id)
                    workers.setAttempt(worker.address, attempt)
                    let body = JobBody(
                        job: job.id, attempt: attempt, song: job.song, name: job.name, params: job.params,
                        timeLimitS: configuration.jobTimeLimitS, envelope: true, location: source.location)
                    sendToWorker(worker.address, .job(body, audio: source.bytes))
                } catch .invalidValue {
                    // No longer queued (cancelled meanwhile): nothing to send.
                    workers.release(worker.address)
                } catch {
                    // The job stays queued (the database is locked, say): try again on a later pass.
                    logger.error("cannot start a job", metadata: ["job": "\(job.id)", "error": "\(error)"])
                    workers.release(worker.address)
                    pending.requeue(job)
                    break
                }
            }
        }
    }

    /// What a JOB carries: the song's location, for a worker that shares its library root,
    /// or its bytes: its blob (an upload whose jobs are not over), else read from its file
    /// below a library root now, through the safe open, and checked against the song's hash.
    private func jobSource(_ job: PendingJob, for worker: ConnectedWorker) throws(ErrorBody) -> JobSource {
        let locations: [SongLocation]
        do {
            guard let song = SongID(job.song) else { throw ErrorBody(code: .internal, message: "invalid song id \(job.song)") }
            locations = try library.locations(of: song).filter { !$0.missing }
        } catch {
            throw ErrorBody(code: .internal, message: "cannot read the song's locations: \(error)")
        }
        if let shared = locations.first(where: { worker.roots.contains($0.root) }) {
            return JobSource(location: JobLocation(root: shared.root, path: shared.path), bytes: [])
        }
        if coordinator.blobs.contains(job.song), let bytes = try? coordinator.blobs.read(job.song) {
            return JobSource(location: nil, bytes: bytes)
        }
        var problems = [String]()
        let roots = LibraryRoots(configuration.libraryRoots)
        for location in locations {
            do throws(ErrorBody) {
                let file = try roots.open(root: location.root, relative: location.path, named: location.absolutePath)
                let bytes = try file.read()
                guard SongID(hashing: bytes).hex == job.song else {
                    throw ErrorBody(code: .songChanged, message: "\(location.absolutePath): the file changed since it was scanned")
                }
                return JobSource(location: nil, bytes: bytes)
            } catch {
                problems.append(error.message)
            }
        }
        guard !problems.isEmpty else {
            throw ErrorBody(
                code: .notFound, message: "\(job.name): the song's bytes are not kept (an upload whose jobs ended) and no file of it is known")
        }
        throw ErrorBody(code: .songChanged, message: problems.joined(separator: "; ") + " (scan again)")
    }

    /// Queues again the jobs the library has as running that no connected worker holds: a
    /// result that could not be stored (the library was locked), or a failure that could not
    /// be recorded. Runs every heartbeat, so no job stays stuck once the library is writable.
    func requeueOrphanedJobs() {
        let held = Set(workers.all.compactMap { $0.assignment?.job })
        do {
            for job in try library.runningJobs() where !held.contains(job.id) {
                try library.requeueJob(job.id)
                if !pending.contains(job.id) {
                    pending.requeue(PendingJob(job))
                }
                logger.notice("requeued a job no worker holds", metadata: ["job": "\(job.id)"])
            }
        } catch {
            logger.warning("cannot requeue orphaned jobs yet", metadata: ["error": "\(error)"])
        }
    }

    func knownDescriptor(_ name: String) -> DetectorDescriptor? {
        configuration.knownDetectors.first { $0.name == name }
    }
}

/// The song of a JOB: its location for the worker to open, or its bytes.
struct JobSource {
    var location: JobLocation?
    var bytes: [UInt8]
}
