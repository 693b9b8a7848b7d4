import Foundation
import Logging
import TactusDetector
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// The frontend: clients' requests and their answers.
extension CoordinatorLoop: SubmissionQueue {
    /// Handles one client message; `userID` is the client's CURVE public key (Z85) when the
    /// coordinator uses CURVE, `peerAddress` its IP address (nil over `ipc://`).
    func handleFrontend(_ frames: [[UInt8]], userID: String?, peerAddress: String?) {
        let envelope: ClientEnvelope
        let message: [[UInt8]]
        do {
            (envelope, message) = try ClientEnvelope.split(frames)
        } catch {
            logger.debug("dropped a frontend message without an envelope", metadata: ["error": "\(error)"])
            return
        }
        let request: ClientRequest
        do {
            request = try ClientRequest(frames: message, limits: configuration.limits, commands: configuration.commands)
        } catch {
            reply(envelope, error.reply)
            return
        }
        let command = request.body.command.name
        let requestID = request.requestID
        let client = userID.map { "key:" + $0 } ?? "connection:" + envelope.routingID.map { String($0, radix: 16) }.joined()
        let answer: RequestRoutes.Answer = { [self] outcome in
            reply(envelope, Self.reply(to: requestID, command: command, outcome, logger: logger))
        }
        // Every command of the table has a route (checked when the loop is made).
        routes.handler(for: command)!(self, request.body, RequestOrigin(client: client, peerAddress: peerAddress), answer)
    }

    /// Routes the library's own commands: reads of the library, `truth`, `detectors` and
    /// `cancel` (submissions are the ``SubmitService``'s).
    static func routeLibraryRequests(into routes: inout RequestRoutes) {
        routes.on(StatusCommand.self) { loop, status, _, answer in
            if let job = status.job {
                loop.answerInBackground(.job(job), then: answer)
            } else if let song = status.song {
                loop.answerInBackground(.jobs(song: song), then: answer)
            } else {
                answer(.success(.status(StatusResponse(jobs: [], server: loop.serverStatus()))))
            }
        }
        routes.on(ResultCommand.self) { loop, request, _, answer in loop.answerInBackground(.result(request), then: answer) }
        routes.on(QueryCommand.self) { loop, request, _, answer in loop.answerInBackground(.query(request), then: answer) }
        routes.on(CompareCommand.self) { loop, request, _, answer in loop.answerInBackground(.compare(request), then: answer) }
        routes.on(PlaylistCommand.self) { loop, request, _, answer in loop.answerInBackground(.playlist(request), then: answer) }
        routes.on(ResolveCommand.self) { loop, request, _, answer in loop.answerInBackground(.resolve(request), then: answer) }
        // A truth with a tempo writes the library, which only the loop does (a truth-import's
        // transaction is bounded by the request's 5,000 references).
        routes.on(TruthCommand.self) { loop, request, _, answer in answer(Result { try loop.service.answer(.truth(request)) }) }
        routes.on(TruthImportCommand.self) { loop, request, _, answer in
            answer(Result { try loop.service.answer(.truthImport(request)) })
        }
        routes.on(DetectorsCommand.self) { loop, _, _, answer in answer(.success(.detectors(loop.detectors()))) }
        routes.on(CancelCommand.self) { loop, request, _, answer in answer(Result { .cancel(try loop.cancel(request)) }) }
    }

    /// Answers a read of the library on a background thread (the library's read pool lets
    /// several run at once, beside the loop's writes): a bulk read on one of the bulk threads.
    private func answerInBackground(
        _ read: LibraryService.Request, then answer: @escaping RequestRoutes.Answer
    ) {
        let pool = Self.isBulk(read) ? bulkReads : reads
        guard pool.inFlight < Self.maxBackgroundWork else { return answer(.failure(pool.busy)) }
        pool.run({ [service] in Result { try service.answer(read) } }, then: answer)
    }

    /// Whether `read` goes through many songs: the comparison of the whole library, a playlist,
    /// or a query that lists more than ``largestSmallQuery`` songs or a histogram. Several at once
    /// (eight tabs exporting a library of 100,000 songs) keep threads busy for seconds, and
    /// would otherwise hold every other client's `status`, `result` and short `query` behind them.
    static func isBulk(_ read: LibraryService.Request) -> Bool {
        switch read {
        case .compare(let request): request.song == nil
        case .playlist: true
        case .query(let query): (query.limit ?? 100) > largestSmallQuery || query.histogram != nil
        case .job, .jobs, .result, .resolve, .truth, .truthImport: false
        }
    }

    /// The most songs a query lists on the threads of small reads (a page of a listing).
    static let largestSmallQuery = 100

    /// The reply to request `requestID`: its answer, or the error it met as the protocol's
    /// error body.
    static func reply(
        to requestID: [UInt8], command: String, _ outcome: Result<ClientReply.Response, any Error>, logger: Logger
    ) -> ClientReply {
        switch outcome {
        case .success(let response): return ClientReply(requestID: requestID, response)
        case .failure(let error as ErrorBody): return ClientReply(requestID: requestID, command: command, error: error)
        case .failure(let error as ProtocolError): return ClientReply(requestID: requestID, command: command, error: error.body)
        case .failure(let error as StoreError): return ClientReply(requestID: requestID, command: command, error: errorBody(error))
        case .failure(let error as any CodedError): return ClientReply(requestID: requestID, command: command, error: ErrorBody(error))
        case .failure(let error):
            logger.error("internal error answering a client", metadata: ["command": "\(command)", "error": "\(error)"])
            return ClientReply(requestID: requestID, command: command, error: ErrorBody(code: .internal, message: "internal error: \(error)"))
        }
    }

    /// Answers a message with too many frames to decode: `too-large`, with the command and
    /// request id echoed as far as its first frames hold them.
    func refuseClientMessage(_ firstFrames: [[UInt8]], frameCount: Int) {
        guard let (envelope, message) = try? ClientEnvelope.split(firstFrames) else { return }
        let tooMany = ProtocolError.tooManyFrames(
            message: "client request", limit: configuration.limits.maxFrames,
            received: frameCount - (firstFrames.count - message.count))
        var requestID: [UInt8] = []
        var command = ""
        do throws(RequestRejection) {
            // Three frames are never a request: the rejection carries what could be read.
            _ = try ClientRequest(frames: Array(message.prefix(3)), limits: configuration.limits)
        } catch {
            requestID = error.requestID
            command = error.command
        }
        reply(envelope, RequestRejection(requestID: requestID, command: command, error: tooMany).reply)
    }

    // MARK: submit

    /// Requests in a background pool beyond which another is answered `busy` (a submission
    /// holds its song's bytes meanwhile).
    static let maxBackgroundWork = 64

    /// Stores and queues a prepared submission's jobs, within the queue's limits (a blob this
    /// submission created is removed again when its jobs are refused or cannot be stored).
    func queue(_ prepared: PreparedSubmission, client: String) throws -> SubmitResponse {
        let requests = prepared.requests
        do {
            if !requests.isEmpty && pending.count + requests.count > configuration.maxQueuedJobs {
                throw ErrorBody(
                    code: .busy, message: "the queue is full (\(pending.count) jobs); submit again later",
                    retryAfterMs: retryHintMs)
            }
            let inFlight = clientJobs.count(of: client)
            if !requests.isEmpty && inFlight > 0 && inFlight + requests.count > configuration.maxClientJobs {
                throw ErrorBody(
                    code: .busy,
                    message: "you have \(inFlight) jobs in flight, the most a client may have is \(configuration.maxClientJobs); "
                        + "submit again when some are done",
                    retryAfterMs: retryHintMs)
            }
            try checkSongJobs(prepared.song.id, adding: requests)
            let jobs = try library.enqueue(prepared.song, jobs: requests, location: prepared.location)
            for job in jobs where job.state == .queued && !pending.contains(job.id) {
                pending.append(PendingJob(job, lane: client))
            }
            clientJobs.add(jobs.filter { $0.state.isActive }.map(\.id), to: client)
            logger.info(
                "song submitted", metadata: ["song": "\(prepared.song.id.short)", "name": "\(prepared.song.fileName)", "jobs": "\(jobs.count)"])
            return SubmitResponse(song: prepared.song.id, jobs: prepared.answered + jobs.map(JobInfo.init))
        } catch {
            // Another submission of the same song may have stored jobs meanwhile: its blob stays.
            if prepared.createdBlob, (try? library.jobs(of: prepared.song.id))?.isEmpty ?? false {
                coordinator.blobs.remove(prepared.song.id)
            }
            throw error
        }
    }

    /// The most jobs one song may have queued or running: parameters are continuous, so without
    /// it one client resubmitting one song with ever new values gives it jobs without end.
    static let maxActiveJobsPerSong = 64

    /// Refuses `busy` a submission that would give `song` more than ``maxActiveJobsPerSong``
    /// active jobs; a request an active job already answers (the same detector and
    /// parameters) adds none.
    func checkSongJobs(_ song: SongID, adding requests: [JobRequest]) throws {
        guard !requests.isEmpty else { return }
        let jobs = try library.activeJobs(of: song)
        let active = Set(jobs.map { $0.detector + "\u{0}" + $0.paramsJSON })
        let added = Set(requests.map { $0.detector + "\u{0}" + $0.params.canonicalJSON }).subtracting(active).count
        guard added == 0 || jobs.count + added <= Self.maxActiveJobsPerSong else {
            let active = jobs.count
            throw ErrorBody(
                code: .busy,
                message: "song \(song.short) has \(active) analyses queued or running, the most one song may have is "
                    + "\(Self.maxActiveJobsPerSong); submit again when some are done",
                retryAfterMs: retryHintMs)
        }
    }

    /// The detectors `names` asks for (every default one when nil), each once, in order of
    /// name, with their declarations.
    func detectors(_ names: [String]?) throws(ErrorBody) -> [SubmissionIntake.Detector] {
        let names = names ?? defaultDetectorNames
        guard !names.isEmpty else {
            throw ErrorBody(code: .unknownDetector, message: "no detector is available: no worker is connected")
        }
        return try Set(names).sorted().map { name throws(ErrorBody) in SubmissionIntake.Detector(name: name, descriptor: try descriptor(of: name)) }
    }

    /// The declaration of `name` from a connected worker or the known detectors; nil for a
    /// name offered by no one yet (external detectors may connect later) only when it is
    /// known; an unknown name is an error.
    func descriptor(of name: String) throws(ErrorBody) -> DetectorDescriptor? {
        if let offered = workers.offered.first(where: { $0.descriptor.name == name }) { return offered.descriptor }
        if let known = knownDescriptor(name) { return known }
        throw ErrorBody(
            code: .unknownDetector,
            message: "unknown detector '\(name)' (available: \(allDetectorNames.joined(separator: ", ")))")
    }

    var allDetectorNames: [String] {
        Array(Set(configuration.knownDetectors.map(\.name) + workers.offered.map(\.descriptor.name))).sorted()
    }

    /// The detectors a submission that names none asks for: every known detector that votes in
    /// the consensus (an advisory one, ``DetectorDescriptor/advisory``, runs only when named).
    var defaultDetectorNames: [String] {
        let advisory = Set((configuration.knownDetectors + workers.offered.map(\.descriptor)).filter(\.advisory).map(\.name))
        return allDetectorNames.filter { !advisory.contains($0) }
    }

    /// How long a client told `busy` should wait: roughly the time to drain a tenth of the queue.
    private var retryHintMs: Int {
        let rate = max(Double(completions.count) / 60, 0.1)
        return min(max(Int(Double(pending.count) / 10 / rate * 1000), 500), 60_000)
    }

    // MARK: status, truth, detectors, cancel

    /// The server's own state: queue depths, workers, throughput.
    private func serverStatus() -> ServerStatus {
        ServerStatus(
            queue: pending.depths,
            workers: workers.all.map { worker in
                let jobs = worker.assignment?.jobs.map(\.job) ?? []
                return WorkerInfo(
                    workerId: worker.id, detector: worker.detectors[0].name, version: worker.detectors[0].version, job: jobs.first,
                    detectors: worker.detectors.count > 1 ? worker.detectorNames : nil, jobs: jobs.count > 1 ? jobs : nil)
            },
            jobsPerSecond: Double(completions.count) / 60, uptimeS: (ContinuousClock.now - started).seconds,
            accepting: accepting)
    }

    private func detectors() -> DetectorsResponse {
        let depths = pending.depths
        var offered = workers.offered.map {
            OfferedDetector(detector: DetectorInfo($0.descriptor), workers: $0.workers, queued: depths[$0.descriptor.name] ?? 0)
        }
        for known in configuration.knownDetectors where !offered.contains(where: { $0.detector.name == known.name }) {
            offered.append(OfferedDetector(detector: DetectorInfo(known), workers: 0, queued: depths[known.name] ?? 0))
        }
        return DetectorsResponse(detectors: offered.sorted { $0.detector.name < $1.detector.name })
    }

    private func cancel(_ request: CancelRequest) throws -> CancelResponse {
        var jobs = [JobRecord]()
        if let id = request.job {
            guard let job = try library.job(id) else { throw ErrorBody(code: .notFound, message: "no job \(id)") }
            jobs = [job]
        } else if let song = request.song {
            jobs = try library.jobs(of: try library.resolveSongID(song))
        }
        var cancelled = [Int64]()
        for job in jobs where job.state.isActive {
            let failure = AnalysisFailure(code: .cancelled, message: "cancelled by a client")
            guard let completion = try library.endJob(job.id, state: .cancelled, failure: failure) else { continue }
            _ = pending.remove(job.id)
            clientJobs.end(job.id)
            cancelled.append(job.id)
            publishSongDoneIfFinished(job.song, completion)
        }
        return CancelResponse(cancelled: cancelled)
    }

    static func errorBody(_ error: StoreError) -> ErrorBody {
        switch error {
        case .unknownSong: return ErrorBody(code: .notFound, message: error.description)
        case .locked(_, let waited):
            return ErrorBody(
                code: .unavailable, message: "the library is locked by another process (waited \(waited) s); nothing was stored",
                retryAfterMs: 1000)
        case .full: return ErrorBody(code: .unavailable, message: error.description, retryAfterMs: 60_000)
        case .database, .cannotOpen, .inUse, .newerSchema: return ErrorBody(code: .internal, message: error.description)
        default: return ErrorBody(code: .badRequest, message: error.description)
        }
    }
}
