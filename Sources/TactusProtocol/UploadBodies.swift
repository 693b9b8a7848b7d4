import TactusModel

/// The body of `upload` (SPEC section 3.9): a song sent in bounded chunks, then submitted
/// with `submit` naming the upload.
///
/// Two forms, told apart by their fields:
/// - begin: `size` and `sha256`, nothing else. The server answers with the upload's id and the
///   largest chunk it takes (`chunk_bytes`), or `busy` (`retry_after_ms`), `too-large`.
/// - chunk: `upload` and `offset`, with the chunk's bytes as the next frame (1 to
///   `chunk_bytes` bytes, starting at `offset`, which is the count of bytes the server has).
///   The answer tells how many bytes the server has now.
public struct UploadRequest: WireBody {
    /// The upload's id, in a chunk.
    public var upload: String?
    /// Where the chunk starts in the song, in a chunk.
    public var offset: Int64?
    /// The song's size in bytes, at the beginning.
    public var size: Int64?
    /// The SHA-256 of the song's bytes (its id), at the beginning.
    public var sha256: SongID?

    /// The beginning of an upload of `size` bytes whose SHA-256 is `sha256`.
    public static func begin(size: Int64, sha256: SongID) -> UploadRequest {
        UploadRequest(upload: nil, offset: nil, size: size, sha256: sha256)
    }

    /// A chunk of upload `upload` starting at `offset` (its bytes travel in the next frame).
    public static func chunk(_ upload: String, offset: Int64) -> UploadRequest {
        UploadRequest(upload: upload, offset: offset, size: nil, sha256: nil)
    }

    /// Whether the request begins an upload (otherwise it carries a chunk).
    public var isBeginning: Bool { upload == nil }

    public func validate(command: String) throws(ProtocolError) {
        if let upload {
            try Self.checkID(upload, command: command)
            guard let offset, size == nil, sha256 == nil else {
                throw .invalidBody(command: command, field: "offset", detail: "a chunk has upload and offset, and neither size nor sha256")
            }
            guard (0...Self.maxSize).contains(offset) else {
                throw .invalidBody(command: command, field: "offset", detail: "must be 0 to \(Self.maxSize)")
            }
        } else {
            guard let size, sha256 != nil, offset == nil else {
                throw .invalidBody(command: command, field: "size", detail: "an upload begins with size and sha256, and no offset")
            }
            guard (1...Self.maxSize).contains(size) else {
                throw .invalidBody(command: command, field: "size", detail: "must be 1 to \(Self.maxSize)")
            }
        }
    }

    /// The largest `size` and `offset` accepted: 2^50 bytes (a server's own limit is far lower).
    public static let maxSize: Int64 = 1 << 50

    /// Upload ids: 1 to 64 lowercase letters, digits and `-`.
    static func checkID(_ id: String, field: String = "upload", command: String) throws(ProtocolError) {
        guard (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else {
            throw .invalidBody(command: command, field: field, detail: "an upload id is 1 to 64 lowercase letters, digits and '-'")
        }
    }
}

/// The answer to `upload`: where the upload stands.
public struct UploadStatus: WireBody {
    /// The upload's id, for its chunks and for the `submit` that ends it.
    public var upload: String
    /// The song's size, as the upload began.
    public var size: Int64
    /// The bytes the server has, from the start: the next chunk starts there.
    public var received: Int64
    /// The largest chunk the server takes.
    public var chunkBytes: Int

    public init(upload: String, size: Int64, received: Int64, chunkBytes: Int) {
        self.upload = upload
        self.size = size
        self.received = received
        self.chunkBytes = chunkBytes
    }

    enum CodingKeys: String, CodingKey {
        case upload, size, received, chunkBytes = "chunk_bytes"
    }

    /// Whether every byte has arrived: the song can be submitted.
    public var isComplete: Bool { received == size }
}
