import Foundation
import Logging
import TactusModel
import TactusProtocol

/// The songs being uploaded in chunks (`upload`, SPEC section 3.9), each written to a file of
/// its own under the uploads directory as its chunks arrive, so that the coordinator holds at
/// most one chunk of each in memory. Owned by the poll loop.
///
/// An upload belongs to the client that began it (its CURVE key, or its connection without
/// CURVE): another client is told it does not exist. Chunks come in order; a chunk sent again
/// (a client that timed out resends) is answered without being written twice. An upload whose
/// client has been silent for ``idleLimit`` is forgotten, its file removed. Once submitted, its
/// file is removed and the answer kept (for a client that resends the `submit`) until it is
/// forgotten in turn.
struct UploadBook {
    /// The largest chunk taken, in bytes.
    static let chunkBytes = 1 << 20
    /// The uploads one client may have open at once.
    static let maxPerClient = 8
    /// The uploads open at once, over all clients.
    static let maxOpen = 64
    /// How long an upload waits for its next chunk or its `submit`.
    static let idleLimit: Duration = .seconds(120)

    struct Upload {
        let id: String
        let client: String
        let size: Int64
        let sha256: String
        let path: String
        var received: Int64 = 0
        var lastUsed: ContinuousClock.Instant
        /// The answer of its `submit`, once submitted.
        var submitted: SubmitResponse?
        /// The size of the last chunk, to recognise a chunk sent again.
        var lastChunk = 0
        /// The SHA-256 of the chunks written so far, computed as they arrive so the finished
        /// file need not be read back to be checked.
        var hasher = SongID.Hasher()

        var status: UploadStatus {
            UploadStatus(upload: id, size: size, received: received, chunkBytes: UploadBook.chunkBytes)
        }
    }

    let directory: String
    /// The most bytes the uploads open at once may declare (their files' total on disk).
    let maxOpenBytes: Int64
    private(set) var uploads: [String: Upload] = [:]
    private let writer: UploadFileWriter

    /// An empty book writing under `directory`, which is emptied (uploads do not survive a restart).
    init(directory: String, maxOpenBytes: Int64, logger: Logger) throws {
        self.directory = directory
        self.maxOpenBytes = maxOpenBytes
        writer = UploadFileWriter(maxChunkBytes: Self.chunkBytes, logger: logger)
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Begins an upload of `size` bytes for `client`, within `maxSongBytes`.
    mutating func begin(size: Int64, sha256: String, client: String, maxSongBytes: Int) throws(ErrorBody) -> UploadStatus {
        guard size <= Int64(maxSongBytes) else {
            throw ErrorBody(
                code: .tooLarge, message: "the song is \(size) bytes, over the server's song size limit of \(maxSongBytes) bytes")
        }
        let open = uploads.values.filter { $0.submitted == nil }
        guard open.filter({ $0.client == client }).count < Self.maxPerClient else {
            throw ErrorBody(
                code: .busy, message: "you have \(Self.maxPerClient) uploads open, the most a client may have; finish one first",
                retryAfterMs: 1000)
        }
        let declared = open.reduce(Int64(0)) { $0 + $1.size }
        guard open.count < Self.maxOpen, open.isEmpty || declared + size <= maxOpenBytes else {
            throw ErrorBody(
                code: .busy, message: "the server is receiving \(open.count) uploads (\(declared) bytes); upload again shortly",
                retryAfterMs: 1000)
        }
        let id = UUID().uuidString.lowercased()
        let path = (directory as NSString).appendingPathComponent(id)
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ErrorBody(code: .unavailable, message: "cannot create the upload's file", retryAfterMs: 5000)
        }
        let upload = Upload(id: id, client: client, size: size, sha256: sha256, path: path, lastUsed: .now)
        uploads[id] = upload
        return upload.status
    }

    /// Writes a chunk of upload `id` starting at `offset`.
    mutating func append(_ chunk: [UInt8], to id: String, offset: Int64, client: String) throws(ErrorBody) -> UploadStatus {
        guard var upload = uploads[id], upload.client == client, upload.submitted == nil else {
            throw ErrorBody(
                code: .notFound, message: "no upload \(id) in progress (uploads are forgotten after \(Self.idleSeconds) s idle)")
        }
        upload.lastUsed = .now
        defer { uploads[id] = upload }
        // `received - count`, not `offset + count`, which a huge offset could overflow.
        if offset == upload.received - Int64(chunk.count) && chunk.count == upload.lastChunk {
            return upload.status  // the last chunk sent again: already written
        }
        guard offset == upload.received else {
            throw ErrorBody(code: .badRequest, message: "the chunk starts at byte \(offset); the upload has \(upload.received) bytes")
        }
        guard chunk.count <= Self.chunkBytes else {
            throw ErrorBody(code: .tooLarge, message: "the chunk is \(chunk.count) bytes, over the \(Self.chunkBytes) bytes of chunk_bytes")
        }
        guard upload.received + Int64(chunk.count) <= upload.size else {
            throw ErrorBody(
                code: .badRequest,
                message: "the chunk ends at byte \(upload.received + Int64(chunk.count)), past the upload's size of \(upload.size)")
        }
        try writer.write(chunk, to: upload.path, at: offset)
        chunk.withUnsafeBytes { upload.hasher.update($0) }
        upload.received += Int64(chunk.count)
        upload.lastChunk = chunk.count
        return upload.status
    }

    /// The finished upload `id` of `client`, for its `submit`; or the answer of that `submit`
    /// when it was already made.
    mutating func finished(_ id: String, client: String) throws(ErrorBody) -> Upload {
        guard var upload = uploads[id], upload.client == client else {
            throw ErrorBody(code: .notFound, message: "no upload \(id) (uploads are forgotten after \(Self.idleSeconds) s idle)")
        }
        upload.lastUsed = .now
        uploads[id] = upload
        guard upload.received == upload.size else {
            throw ErrorBody(code: .badRequest, message: "upload \(id) has \(upload.received) of its \(upload.size) bytes")
        }
        return upload
    }

    /// Records the answer of upload `id`'s `submit` and removes its file.
    mutating func submitted(_ id: String, answer: SubmitResponse) {
        guard uploads[id] != nil else { return }
        uploads[id]?.submitted = answer
        uploads[id]?.lastUsed = .now
        unlink(uploads[id]!.path)
    }

    /// Forgets the uploads idle for longer than ``idleLimit``, removing their files.
    mutating func expire(at now: ContinuousClock.Instant) {
        for (id, upload) in uploads where now - upload.lastUsed > Self.idleLimit {
            unlink(upload.path)
            uploads[id] = nil
        }
    }

    private static var idleSeconds: Int { Int(idleLimit.components.seconds) }
}
