import TactusProtocol

/// The `cadence` request: an accelerometer recording analysed by the coordinator's
/// ``RecordingAnalyzer`` (with `tactus serve`, in a service host process), waited for on the
/// service's own threads, never a read thread.
///
/// Owns its threads; a recording over a frame comes as an upload, which it takes from the
/// ``UploadService`` and removes once answered. Lives on the loop's thread.
final class CadenceService: RequestService {
    private let coordinator: Coordinator
    private let uploads: UploadService
    /// The threads that wait for the analyzer (which may take seconds per recording).
    let work: BackgroundWork

    init(coordinator: Coordinator, uploads: UploadService) throws(CoordinatorError) {
        self.coordinator = coordinator
        self.uploads = uploads
        work = try BackgroundWork(threads: 4, name: "tactus-cadence")
    }

    /// Routes `cadence` to this service.
    func route(into routes: inout RequestRoutes) {
        routes.on(CadenceCommand.self) { [self] _, request, origin, answer in
            begin(request.body, recording: request.recording, client: origin.client, then: answer)
        }
    }

    /// Checks the recording's size here, then hands it to the analyzer on a service thread
    /// (``BackgroundWork``), so that a long recording never holds up the loop nor the reads.
    /// A recording sent in the message (`recording`) is at most a frame; a larger one comes as
    /// an upload of `client`'s, whose file the analyzer reads, and which is removed once answered.
    func begin(
        _ request: CadenceRequest, recording: [UInt8]?, client: String, then answer: @escaping RequestRoutes.Answer
    ) {
        do {
            guard let analyzer = coordinator.recordings else {
                throw ErrorBody(code: .forbidden, message: "this server does not analyse recordings")
            }
            var upload: UploadBook.Upload?
            if let id = request.upload { upload = try uploadedRecording(id, name: request.name, client: client) }
            let size = upload.map { Int($0.size) } ?? recording?.count ?? 0
            let limit = coordinator.configuration.maxRecordingBytes
            guard size <= limit else {
                throw ErrorBody(code: .tooLarge, message: "\(request.name): \(size) bytes, more than the limit of \(limit) bytes")
            }
            guard work.inFlight < CoordinatorLoop.maxBackgroundWork else {
                throw ErrorBody(code: .busy, message: "the server has \(work.inFlight) recordings in hand; try again shortly", retryAfterMs: 200)
            }
            let name = request.name
            guard let upload else {
                work.run({ Result { () throws(ErrorBody) in .cadence(try analyzer.cadence(of: recording ?? [], name: name)) } }) {
                    answer($0.mapError { $0 as any Error })
                }
                return
            }
            uploads.submitting(upload.id)
            work.run({
                Result { () throws(ErrorBody) in .cadence(try analyzer.cadence(ofFileAt: upload.path, size: size, name: name)) }
            }) { [self] outcome in
                uploads.remove(upload.id)
                answer(outcome.mapError { $0 as any Error })
            }
        } catch {
            answer(.failure(error))
        }
    }

    /// The finished upload `id` of `client` holding a recording, its bytes checked against the
    /// SHA-256 announced when it began.
    private func uploadedRecording(_ id: String, name: String, client: String) throws(ErrorBody) -> UploadBook.Upload {
        let upload = try uploads.finished(id, client: client)
        guard upload.submitted == nil else {
            throw ErrorBody(code: .notFound, message: "no upload \(id): it was submitted as a song")
        }
        _ = try upload.receivedSong(name: name)
        return upload
    }
}
