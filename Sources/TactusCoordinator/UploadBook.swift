import Foundation
import Logging
import Synchronization
import TactusModel
import TactusProtocol
import TactusZMQ

/// The songs and recordings being uploaded in chunks (`upload`, SPEC section 3.9), each written
/// to a file of its own under the uploads directory as its chunks arrive, so that the
/// coordinator holds at most one chunk of each in memory. Owned by the poll loop; the loop hands
/// each chunk's ``ChunkWrite`` to a thread of its own and reports it with ``written(_:_:)``.
///
/// An upload belongs to the client that began it (its CURVE key, or its connection without
/// CURVE): another client is told it does not exist. A client has at most ``maxPerClient``
/// open, and a peer (an address, whatever its connections: ``RequestOrigin/peer``) at most
/// ``maxPerPeer`` declaring a quarter of ``maxOpenBytes``, so that one address cannot take
/// every upload place by declaring large uploads and sending a chunk now and then; the
/// server's own processes (over a Unix socket: its web gateway's uploads) are not held to it. Chunks come in order; a chunk sent again
/// (a client that timed out resends) is answered without being written twice; a chunk or a
/// `submit` that comes while the last chunk is still being written is told to wait. An upload whose
/// client has been silent for ``idleLimit`` is forgotten, its file removed. Once submitted, its
/// file is removed and the answer kept (for a client that resends the `submit`) until it is
/// forgotten in turn; once a `cadence` request has read it, it is forgotten at once.
struct UploadBook {
    /// The largest chunk taken, in bytes: the largest frame a client sends.
    static let chunkBytes = ProtocolLimits.maxRequestFrameBytes
    /// The uploads one client may have open at once.
    static let maxPerClient = 8
    /// The uploads open at once, over all clients.
    static let maxOpen = 64
    /// The uploads one peer may have open at once, over all its connections.
    static let maxPerPeer = 16
    /// The share of ``maxOpenBytes`` one peer's open uploads may declare.
    static let peerShare: Int64 = 4
    /// How long an upload waits for its next chunk or its `submit`.
    static let idleLimit: Duration = .seconds(120)

    struct Upload {
        let id: String
        let client: String
        let peer: String
        let size: Int64
        let sha256: SongID
        let path: String
        var received: Int64 = 0
        var lastUsed: ContinuousClock.Instant
        /// When the upload last gained ``UploadBook/chunkBytes`` (or its last bytes), and how
        /// many it had then: an upload kept alive by tiny chunks is forgotten all the same.
        var progressedAt: ContinuousClock.Instant
        var progressMark: Int64 = 0
        /// The answer of its `submit`, once submitted.
        var submitted: SubmitResponse?
        /// The size of the last chunk, to recognise a chunk sent again.
        var lastChunk = 0
        /// The SHA-256 of the chunks written so far, computed as they are written so the
        /// finished file need not be read back to be checked.
        let digest = UploadDigest()
        /// Whether a chunk is being written.
        var writing = false
        /// Whether its `submit` is being prepared (off the loop).
        var submitting = false

        /// The SHA-256 of the bytes received, once it is the one announced when the upload began
        /// (`bad-request` naming `name` otherwise).
        func receivedSong(name: String) throws(ErrorBody) -> SongID {
            let received = digest.song
            guard received == sha256 else {
                throw ErrorBody(
                    code: .badRequest, message: "\(name): the \(size) bytes uploaded have the SHA-256 \(received), not \(sha256) as announced")
            }
            return received
        }

        var status: UploadStatus {
            UploadStatus(upload: id, size: size, received: received, chunkBytes: UploadBook.chunkBytes)
        }
    }

    let directory: String
    /// The most bytes the uploads open at once may declare (their files' total on disk).
    let maxOpenBytes: Int64
    private(set) var uploads: [String: Upload] = [:]
    /// Writes the chunks, on the thread the loop hands them to.
    let writer: UploadFileWriter

    /// An empty book writing under `directory`, which is emptied (uploads do not survive a restart).
    init(directory: String, maxOpenBytes: Int64, logger: Logger) throws {
        self.directory = directory
        self.maxOpenBytes = maxOpenBytes
        writer = UploadFileWriter(maxChunkBytes: Self.chunkBytes, logger: logger)
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Begins an upload of `size` bytes for `client` at `peer`, within `maxSongBytes`.
    mutating func begin(
        size: Int64, sha256: SongID, client: String, peer: String = PeerAddress.local, maxSongBytes: Int, at now: ContinuousClock.Instant = .now
    ) throws(ErrorBody) -> UploadStatus {
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
        let fromPeer = open.filter { $0.peer == peer }
        let peerDeclared = fromPeer.reduce(Int64(0)) { $0 + $1.size }
        guard peer == PeerAddress.local || fromPeer.isEmpty
            || (fromPeer.count < Self.maxPerPeer && peerDeclared + size <= maxOpenBytes / Self.peerShare)
        else {
            throw ErrorBody(
                code: .busy,
                message: "your address has \(fromPeer.count) uploads open (\(peerDeclared) bytes), its share of the server's; finish one first",
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
        let upload = Upload(id: id, client: client, peer: peer, size: size, sha256: sha256, path: path, lastUsed: now, progressedAt: now)
        uploads[id] = upload
        return upload.status
    }

    /// What to do with a chunk: answer at once (a chunk sent again), or write it.
    enum ChunkStep {
        case answered(UploadStatus)
        case write(ChunkWrite)
    }

    /// Takes a chunk of upload `id` starting at `offset`: checks it against the upload and marks
    /// the upload as being written until ``written(_:_:)``.
    mutating func append(_ chunk: [UInt8], to id: String, offset: Int64, client: String) throws(ErrorBody) -> ChunkStep {
        guard var upload = uploads[id], upload.client == client, upload.submitted == nil else {
            throw ErrorBody(
                code: .notFound, message: "no upload \(id) in progress (uploads are forgotten after \(Self.idleSeconds) s idle)")
        }
        guard !upload.writing else { throw Self.stillWriting(id) }
        upload.lastUsed = .now
        defer { uploads[id] = upload }
        // `received - count`, not `offset + count`, which a huge offset could overflow.
        if offset == upload.received - Int64(chunk.count) && chunk.count == upload.lastChunk {
            return .answered(upload.status)  // the last chunk sent again: already written
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
        upload.writing = true
        return .write(ChunkWrite(upload: id, path: upload.path, offset: offset, bytes: chunk, digest: upload.digest))
    }

    /// Records how the write of `chunk` ended (`now`), the upload's status, or the write's error.
    mutating func written(
        _ chunk: ChunkWrite, _ outcome: Result<Void, ErrorBody>, at now: ContinuousClock.Instant = .now
    ) throws(ErrorBody) -> UploadStatus {
        guard var upload = uploads[chunk.upload] else {
            throw ErrorBody(code: .notFound, message: "no upload \(chunk.upload) in progress")
        }
        upload.writing = false
        upload.lastUsed = now
        defer { uploads[chunk.upload] = upload }
        try outcome.get()
        upload.received += Int64(chunk.bytes.count)
        upload.lastChunk = chunk.bytes.count
        if upload.received - upload.progressMark >= Int64(Self.chunkBytes) || upload.received == upload.size {
            upload.progressMark = upload.received
            upload.progressedAt = now
        }
        return upload.status
    }

    /// The finished upload `id` of `client`, for its `submit`; or the answer of that `submit`
    /// when it was already made.
    mutating func finished(_ id: String, client: String) throws(ErrorBody) -> Upload {
        guard var upload = uploads[id], upload.client == client else {
            throw ErrorBody(code: .notFound, message: "no upload \(id) (uploads are forgotten after \(Self.idleSeconds) s idle)")
        }
        guard !upload.writing else { throw Self.stillWriting(id) }
        guard !upload.submitting else {
            throw ErrorBody(
                code: .busy, message: "upload \(id) is in use by an earlier request; send again shortly for its answer", retryAfterMs: 200)
        }
        upload.lastUsed = .now
        uploads[id] = upload
        guard upload.received == upload.size else {
            throw ErrorBody(code: .badRequest, message: "upload \(id) has \(upload.received) of its \(upload.size) bytes")
        }
        return upload
    }

    /// Marks upload `id` as being submitted (or its recording analysed): a request sent again
    /// meanwhile is told to wait (it would find the file gone once the first is done).
    mutating func submitting(_ id: String) {
        uploads[id]?.submitting = true
    }

    /// Ends the `submit` of upload `id`: with its answer, kept for a `submit` sent again, and
    /// the file removed; without (it failed: `busy`, a bad hash), the upload stays as it was.
    mutating func submitEnded(_ id: String, answer: SubmitResponse?) {
        guard uploads[id] != nil else { return }
        uploads[id]?.submitting = false
        uploads[id]?.lastUsed = .now
        guard let answer else { return }
        uploads[id]?.submitted = answer
        unlink(uploads[id]!.path)
    }

    /// Forgets upload `id` and removes its file: a recording's, once its `cadence` is answered.
    mutating func remove(_ id: String) {
        guard let upload = uploads.removeValue(forKey: id) else { return }
        unlink(upload.path)
    }

    /// Forgets the uploads idle for longer than ``idleLimit``, and those not finished that have
    /// not gained a chunk's worth of bytes in that time (eight uploads announced at the song
    /// size limit and fed a byte every 100 s held every place for uploads), removing their files
    /// (not one whose chunk is being written or that is being submitted or analysed).
    mutating func expire(at now: ContinuousClock.Instant) {
        for (id, upload) in uploads where !upload.writing && !upload.submitting {
            let stalled = upload.received < upload.size && now - upload.progressedAt > Self.idleLimit
            guard now - upload.lastUsed > Self.idleLimit || stalled else { continue }
            unlink(upload.path)
            uploads[id] = nil
        }
    }

    private static var idleSeconds: Int { Int(idleLimit.components.seconds) }

    private static func stillWriting(_ id: String) -> ErrorBody {
        ErrorBody(code: .busy, message: "the last chunk of upload \(id) is still being written; send again shortly", retryAfterMs: 100)
    }
}

/// A chunk to write, handed from the loop to the thread that writes uploads.
struct ChunkWrite: Sendable {
    let upload: String
    let path: String
    let offset: Int64
    let bytes: [UInt8]
    let digest: UploadDigest

    /// Writes the chunk to its upload's file with `writer`, then adds it to the upload's SHA-256.
    func perform(with writer: UploadFileWriter) -> Result<Void, ErrorBody> {
        do throws(ErrorBody) {
            try writer.write(bytes, to: path, at: offset)
        } catch {
            return .failure(error)
        }
        digest.update(bytes)
        return .success(())
    }
}

/// The SHA-256 of an upload's chunks: fed on the thread that writes them, read on the loop's
/// for the upload's `submit`.
final class UploadDigest: Sendable {
    private let hasher = Mutex(SongID.Hasher())

    /// Adds the next chunk.
    func update(_ bytes: [UInt8]) {
        hasher.withLock { hasher in bytes.withUnsafeBytes { hasher.update($0) } }
    }

    /// The id of every byte added.
    var song: SongID { hasher.withLock { $0.finalize() } }
}
