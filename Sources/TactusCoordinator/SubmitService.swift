import TactusProtocol

/// What a submission needs of the loop, which owns the queue: whether it takes songs, the
/// detectors a song is analysed by, the threads that prepare songs, and the queueing of a
/// prepared song's jobs within the queue's limits.
protocol SubmissionQueue: AnyObject {
    /// False once a stop was asked for: new songs are refused.
    var accepting: Bool { get }
    /// The threads that take the slow steps of a submission off the loop.
    var intake: BackgroundWork { get }
    /// The detectors named, with their declarations (the default ones when `names` is nil);
    /// `unknown-detector` for a name no one offers or knows, or when there is none.
    func detectors(_ names: [String]?) throws(ErrorBody) -> [SubmissionIntake.Detector]
    /// Stores and queues `prepared`'s jobs for `client`, within the queue's limits.
    func queue(_ prepared: PreparedSubmission, client: String) throws -> SubmitResponse
}

/// The `submit` request, in three steps:
/// 1. here, on the loop's thread, what can be refused at once: a stopping server, a message
///    over the inline limit, an upload not finished or not the client's, parameters for a
///    detector not asked for, more bytes in hand than `--max-intake-bytes`;
/// 2. on an intake thread (``SubmissionIntake``): the song's hash and header, the analyses the
///    library holds already, the blob written durably;
/// 3. back on the loop (``SubmissionQueue/queue(_:client:)``): the jobs stored and queued.
///
/// Owns the budget of bytes in hand. A song sent as an upload is taken from the
/// ``UploadService``, which keeps the answer, so that a submit repeated after a lost reply is
/// answered the same. Lives on the loop's thread.
final class SubmitService: RequestService {
    private let coordinator: Coordinator
    private let uploads: UploadService
    /// The bytes of the songs being prepared, under ``CoordinatorConfiguration/maxIntakeBytes``.
    let budget: IntakeBudget

    init(coordinator: Coordinator, uploads: UploadService) {
        self.coordinator = coordinator
        self.uploads = uploads
        budget = IntakeBudget(limit: coordinator.configuration.maxIntakeBytes)
    }

    /// Routes `submit` to this service, queueing on the loop.
    func route(into routes: inout RequestRoutes) {
        routes.on(SubmitCommand.self) { [self] loop, request, origin, answer in
            begin(request.body, audio: request.audio, client: origin.client, queue: loop, then: answer)
        }
    }

    /// Takes the submission `request` of `client` (with the song's bytes as `audio`, or as an
    /// upload or a path named in it), and answers it once its jobs are queued in `queue`.
    func begin(
        _ request: SubmitRequest, audio: [UInt8]?, client: String, queue: some SubmissionQueue,
        then answer: @escaping RequestRoutes.Answer
    ) {
        let configuration = coordinator.configuration
        let name = request.name ?? "upload"
        do {
            guard queue.accepting else {
                throw ErrorBody(
                    code: .unavailable,
                    message: "the server is stopping and takes no new songs (those it accepted stay queued and resume when it restarts)",
                    retryAfterMs: 5000)
            }
            if let audio, audio.count > configuration.maxInlineSongBytes {
                throw ErrorBody(
                    code: .tooLarge,
                    message: "\(request.name ?? "the song"): \(audio.count) bytes is over the \(configuration.maxInlineSongBytes) bytes a "
                        + "submit message may carry; send it as an upload (protocol/SPEC.md, section 3.9)")
            }
            var uploaded: SubmissionIntake.UploadedFile?
            if let id = request.upload {
                let upload = try uploads.finished(id, client: client)
                if let answered = upload.submitted { return answer(.success(.submit(answered))) }
                uploaded = SubmissionIntake.UploadedFile(path: upload.path, size: Int(upload.size), song: try upload.receivedSong(name: name))
            }
            let pool = queue.intake
            guard pool.inFlight < CoordinatorLoop.maxBackgroundWork else { throw pool.busy }
            let detectors = try queue.detectors(request.detectors)
            if let stray = request.params?.keys.sorted().first(where: { stray in !detectors.contains { $0.name == stray } }) {
                let asked = detectors.map(\.name).joined(separator: ", ")
                throw ErrorBody(
                    code: .badRequest, message: "params for \(stray), a detector this submission does not ask for (it asks for \(asked))")
            }
            let intake = SubmissionIntake(
                request: request, audio: audio, detectors: detectors, library: coordinator.library, blobs: coordinator.blobs,
                probe: coordinator.probe, maxSongBytes: configuration.maxSongBytes, maxAudioBytes: configuration.limits.maxAudioBytes,
                libraryRoots: coordinator.libraryRoots, uploaded: uploaded)
            // A message's bytes are in hand already; an upload's stay in its file (never read back whole).
            let inHand = audio?.count ?? 0
            if audio != nil { try budget.reserve(inHand, name: name) }
            if let id = request.upload { uploads.submitting(id) }
            pool.run({ Result { try intake.prepare() } }) { [self] prepared in
                budget.release(inHand)
                let response = prepared.flatMap { prepared in Result { try queue.queue(prepared, client: client) } }
                if let id = request.upload {
                    // Bytes refused for what they are (not audio, damaged, too long) cannot be
                    // submitted again: the upload goes, its file and its place with it.
                    if case .failure(let error as ErrorBody) = response, error.code.concernsTheSong {
                        uploads.remove(id)
                    } else {
                        uploads.submitEnded(id, answer: try? response.get())
                    }
                }
                answer(response.map { .submit($0) })
            }
        } catch {
            answer(.failure(error))
        }
    }
}
