import Foundation
import Logging
import TactusAudio
import TactusDetector
import TactusProtocol
import TactusStore

/// The frontend: clients' requests and their answers.
extension CoordinatorLoop {
    /// Handles one client message; `userID` is the client's CURVE public key (Z85) when the
    /// coordinator uses CURVE.
    func handleFrontend(_ frames: [[UInt8]], userID: String?) {
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
            request = try ClientRequest(frames: message, limits: configuration.limits)
        } catch {
            reply(envelope, error.reply)
            return
        }
        let command = request.body.command.rawValue
        do {
            let client = userID.map { "key:" + $0 } ?? "connection:" + envelope.routingID.map { String($0, radix: 16) }.joined()
            let response = try answer(request.body, client: client)
            reply(envelope, ClientReply(requestID: request.requestID, response))
        } catch let error as ErrorBody {
            reply(envelope, ClientReply(requestID: request.requestID, command: command, error: error))
        } catch let error as ProtocolError {
            reply(envelope, ClientReply(requestID: request.requestID, command: command, error: error.body))
        } catch let error as StoreError {
            reply(envelope, ClientReply(requestID: request.requestID, command: command, error: Self.errorBody(error)))
        } catch {
            logger.error("internal error answering a client", metadata: ["command": "\(command)", "error": "\(error)"])
            reply(
                envelope,
                ClientReply(
                    requestID: request.requestID, command: command,
                    error: ErrorBody(code: .internal, message: "internal error: \(error)")))
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

    private func answer(_ body: ClientRequest.Body, client: String) throws -> ClientReply.Response {
        switch body {
        case .submit(let request, let audio): return .submit(try submit(request, audio: audio, client: client))
        case .status(let request): return .status(try status(request))
        case .result(let request):
            let (response, envelope) = try result(request)
            return .result(response, envelope: envelope)
        case .query(let request): return .query(SongList(songs: try library.query(request.tempoQuery)))
        case .compare(let request):
            guard let song = request.song else {
                return .compare(CompareResponse(library: try library.compareLibrary(binWidth: request.binWidth ?? 10)))
            }
            return .compare(CompareResponse(song: try library.compare(try library.resolveSongID(song))))
        case .playlist(let request):
            return .playlist(PlaylistResponse(playlist: try library.playlist(try request.playlistRequest())))
        case .truth(let request):
            let song = try library.resolveSongID(request.song)
            if let bpm = request.bpm { try library.setReference(bpm, for: song) }
            return .truth(TruthResponse(song: song.hex, reference: try library.reference(for: song)))
        case .detectors: return .detectors(detectors())
        case .cancel(let request): return .cancel(try cancel(request))
        }
    }

    // MARK: submit

    private func submit(_ request: SubmitRequest, audio: [UInt8]?, client: String) throws -> SubmitResponse {
        guard accepting else {
            throw ErrorBody(code: .unavailable, message: "the server is stopping; submit again after it restarts", retryAfterMs: 5000)
        }
        let (bytes, name) = try songBytes(request, audio: audio)
        guard bytes.count <= configuration.maxSongBytes else {
            throw ErrorBody(
                code: .tooLarge,
                message: "\(name): \(bytes.count) bytes is over the server's song size limit of \(configuration.maxSongBytes) bytes")
        }
        let song = SongID(hashing: bytes)
        let metadata: AudioMetadata
        do {
            metadata = try AudioStream(.bytes(bytes, name: name), options: configuration.decoding).metadata
        } catch {
            throw ErrorBody(code: ErrorCode(rawValue: error.code), message: error.description)
        }

        let names = request.detectors ?? allDetectorNames
        guard !names.isEmpty else {
            throw ErrorBody(code: .unknownDetector, message: "no detector is available: no worker is connected")
        }
        var requests = [JobRequest]()
        var answered = [JobInfo]()
        for detector in Set(names).sorted() {
            let given = request.params?[detector] ?? ParameterSet()
            let descriptor = try descriptor(of: detector)
            if let descriptor, request.force != true, let stored = try storedAnalysis(song, descriptor, given) {
                answered.append(
                    JobInfo(
                        job: 0, song: song.hex, detector: detector, state: stored.record.status == .failed ? .failed : .done,
                        error: stored.record.failure.map { ErrorBody(code: ErrorCode(rawValue: $0.code), message: $0.message) }))
                continue
            }
            requests.append(JobRequest(detector: detector, params: given))
        }
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
        // A blob this request creates is removed again if the jobs cannot be stored, so a
        // refused submission leaves nothing behind.
        var createdBlob = false
        if !requests.isEmpty {
            createdBlob = !coordinator.blobs.contains(song.hex)
            do {
                try coordinator.blobs.put(bytes, id: song.hex)
            } catch {
                throw ErrorBody(
                    code: error.code == .diskFull ? .unavailable : .internal, message: "cannot store the song: \(error.message)",
                    retryAfterMs: error.code == .diskFull ? 60_000 : nil)
            }
        }
        let record = SongRecord(id: song, fileName: name, byteSize: bytes.count, metadata: metadata)
        let jobs: [JobRecord]
        do {
            jobs = try library.enqueue(record, jobs: requests)
        } catch {
            if createdBlob { coordinator.blobs.remove(song.hex) }
            throw error
        }
        for job in jobs where job.state == .queued && !pending.contains(job.id) {
            pending.append(PendingJob(id: job.id, song: song.hex, detector: job.detector, params: job.params))
        }
        clientJobs.add(jobs.filter { $0.state.isActive }.map(\.id), to: client)
        logger.info("song submitted", metadata: ["song": "\(song.short)", "name": "\(name)", "jobs": "\(jobs.count)"])
        return SubmitResponse(song: song.hex, jobs: answered + jobs.map(JobInfo.init))
    }

    /// The song's bytes and name: the request's audio frame, or a file under a library root.
    private func songBytes(_ request: SubmitRequest, audio: [UInt8]?) throws -> ([UInt8], String) {
        if let audio {
            return (audio, request.name ?? "upload")
        }
        guard let path = request.path else {
            throw ErrorBody(code: .badRequest, message: "submit needs the song's bytes or a path")
        }
        let resolved = try LibraryRoots(configuration.libraryRoots).resolve(path)
        guard let data = FileManager.default.contents(atPath: resolved) else {
            throw ErrorBody(code: .unreadable, message: "\(path): cannot read the file")
        }
        guard data.count <= configuration.limits.maxAudioBytes else {
            throw ErrorBody(
                code: .tooLarge, message: "\(path): \(data.count) bytes is over the limit of \(configuration.limits.maxAudioBytes)")
        }
        return ([UInt8](data), request.name ?? (path as NSString).lastPathComponent)
    }

    /// A stored analysis with the detector's current version and the same resolved parameters.
    private func storedAnalysis(_ song: SongID, _ descriptor: DetectorDescriptor, _ given: ParameterSet) throws -> StoredAnalysis? {
        let resolved: ParameterSet
        do {
            resolved = try descriptor.resolve(given)
        } catch {
            throw ErrorBody(code: .invalidParameter, message: error.description)
        }
        return try library.analysis(of: song, detector: descriptor.name, version: descriptor.version, params: resolved)
    }

    /// The declaration of `name` from a connected worker or the known detectors; nil for a
    /// name offered by no one yet (external detectors may connect later) only when it is
    /// known; an unknown name is an error.
    private func descriptor(of name: String) throws -> DetectorDescriptor? {
        if let offered = workers.offered.first(where: { $0.descriptor.name == name }) { return offered.descriptor }
        if let known = knownDescriptor(name) { return known }
        throw ErrorBody(
            code: .unknownDetector,
            message: "unknown detector '\(name)' (available: \(allDetectorNames.joined(separator: ", ")))")
    }

    private var allDetectorNames: [String] {
        Array(Set(configuration.knownDetectors.map(\.name) + workers.offered.map(\.descriptor.name))).sorted()
    }

    /// How long a client told `busy` should wait: roughly the time to drain a tenth of the queue.
    private var retryHintMs: Int {
        let rate = max(Double(completions.count) / 60, 0.1)
        return min(max(Int(Double(pending.count) / 10 / rate * 1000), 500), 60_000)
    }

    // MARK: status, result, detectors, cancel

    private func status(_ request: StatusRequest) throws -> StatusResponse {
        if let job = request.job {
            guard let record = try library.job(job) else { throw ErrorBody(code: .notFound, message: "no job \(job)") }
            return StatusResponse(jobs: [JobInfo(record)])
        }
        if let song = request.song {
            return StatusResponse(jobs: try library.jobs(of: try library.resolveSongID(song)).map(JobInfo.init))
        }
        let server = ServerStatus(
            queue: pending.depths,
            workers: workers.all.map {
                WorkerInfo(workerId: $0.id, detector: $0.detector.name, version: $0.detector.version, job: $0.assignment?.job)
            },
            jobsPerSecond: Double(completions.count) / 60, uptimeS: (ContinuousClock.now - started).seconds,
            accepting: accepting)
        return StatusResponse(jobs: [], server: server)
    }

    private func result(_ request: ResultRequest) throws -> (ResultResponse, [Float]?) {
        let song = try library.resolveSongID(request.song)
        guard let record = try library.song(song) else { throw ErrorBody(code: .notFound, message: "unknown song \(request.song)") }
        let wanted = request.detectors.map(Set.init)
        let stored = try library.analyses(of: song, windows: request.windows ?? false)
            .filter { wanted?.contains($0.record.analysis.detector) ?? true && $0.record.status != .failed }
        let active = try library.jobs(of: song).filter { $0.state.isActive }.map(\.detector)
        let envelope = request.envelope == true ? record.envelope : nil
        let response = ResultResponse(
            song: song.hex, name: record.fileName, durationS: record.durationS, analyses: stored.map(\.record.analysis),
            pending: Array(Set(active)).sorted(), consensus: try library.consensus(of: song) ?? ConsensusTempo(bpm: nil, detectors: []),
            envelopeHopS: envelope?.hopS)
        return (response, envelope?.values)
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
            let failure = AnalysisFailure(code: ErrorCode.cancelled.rawValue, message: "cancelled by a client")
            guard let completion = try library.endJob(job.id, state: .cancelled, failure: failure) else { continue }
            _ = pending.remove(job.id)
            clientJobs.end(job.id)
            cancelled.append(job.id)
            publishSongDoneIfFinished(job.song.hex, completion)
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
        case .database, .cannotOpen, .newerSchema: return ErrorBody(code: .internal, message: error.description)
        default: return ErrorBody(code: .badRequest, message: error.description)
        }
    }
}
