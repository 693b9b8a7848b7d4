import Foundation
import Logging
import TactusProtocol

/// The `upload` request: songs sent in chunks (SPEC section 3.9), each chunk written and hashed
/// on the service's own thread, so that the loop never waits for the disk. A finished upload is
/// handed to the `submit` that names it (``finished(_:client:)``).
///
/// Owns its state: the uploads in progress (``UploadBook``) and the thread that writes them.
/// Lives on the loop's thread, which routes it its requests and ticks it (``expire(at:)``).
final class UploadService: RequestService {
    private var book: UploadBook
    /// The thread that writes and hashes the chunks (one: the disk takes one write at a time,
    /// and the writer has one staging buffer).
    let writes: BackgroundWork
    private let maxSongBytes: Int

    init(configuration: CoordinatorConfiguration, logger: Logger) throws {
        maxSongBytes = configuration.maxSongBytes
        book = try UploadBook(directory: configuration.uploadDirectory, maxOpenBytes: Int64(maxSongBytes) * 8, logger: logger)
        writes = try BackgroundWork(threads: 1, name: "tactus-uploads")
    }

    /// Routes `upload` to this service; a new upload needs a server that takes work.
    func route(into routes: inout RequestRoutes) {
        routes.on(UploadCommand.self) { [self] loop, request, origin, answer in
            handle(request.body, chunk: request.chunk, origin: origin, accepting: loop.accepting, then: answer)
        }
    }

    /// Begins an upload, or writes one of its chunks on the service's thread.
    func handle(
        _ request: UploadRequest, chunk: [UInt8]?, origin: RequestOrigin, accepting: Bool, then answer: @escaping RequestRoutes.Answer
    ) {
        let client = origin.client
        do {
            if let id = request.upload, let offset = request.offset, let chunk {
                switch try book.append(chunk, to: id, offset: offset, client: client) {
                case .answered(let status):
                    answer(.success(.upload(status)))
                case .write(let write):
                    writes.run({ [writer = book.writer] in write.perform(with: writer) }) { [self] outcome in
                        answer(Result { .upload(try book.written(write, outcome)) })
                    }
                }
                return
            }
            guard accepting else {
                throw ErrorBody(code: .unavailable, message: "the server is stopping and takes no new songs", retryAfterMs: 5000)
            }
            guard let size = request.size, let sha256 = request.sha256 else {
                throw ErrorBody(code: .badRequest, message: "an upload begins with size and sha256, a chunk has its bytes")
            }
            answer(.success(.upload(try book.begin(size: size, sha256: sha256, client: client, peer: origin.peer, maxSongBytes: maxSongBytes))))
        } catch {
            answer(.failure(error))
        }
    }

    /// The finished upload `id` of `client`, for the `submit` that names it; or that `submit`'s
    /// answer when it was already made.
    func finished(_ id: String, client: String) throws(ErrorBody) -> UploadBook.Upload { try book.finished(id, client: client) }

    /// A `submit` naming upload `id` has begun.
    func submitting(_ id: String) { book.submitting(id) }

    /// The `submit` naming upload `id` has ended, with its answer when it succeeded.
    func submitEnded(_ id: String, answer: SubmitResponse?) { book.submitEnded(id, answer: answer) }

    /// Forgets upload `id` and removes its file: a recording's, once its `cadence` is answered.
    func remove(_ id: String) { book.remove(id) }

    /// Forgets the uploads idle too long, and removes their files.
    func expire(at now: ContinuousClock.Instant) { book.expire(at: now) }
}
