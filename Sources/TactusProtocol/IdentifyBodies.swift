import TactusModel

// The JSON bodies of IDENTIFY and IDENTIFIED (worker protocol, version 2): a coordinator scanning
// its library roots asks a worker that shares them for the SHA-256 of the files it found, so the
// hashing, the scan's largest cost, runs in the worker processes rather than in the coordinator.

/// IDENTIFY: the coordinator asks a worker that declared `identifies` (and the files' roots) in
/// its READY for the SHA-256, size and modification time of files below those roots.
public struct IdentifyBody: WireBody {
    /// The most files one IDENTIFY may name.
    public static let maximumFiles = 64

    /// The coordinator's number for this request, echoed by IDENTIFIED.
    public var request: Int64
    /// The files, each below a root the worker declared.
    public var files: [JobLocation]

    public init(request: Int64, files: [JobLocation]) {
        self.request = request
        self.files = files
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.positive(request, field: "request", command: command)
        guard (1...Self.maximumFiles).contains(files.count) else {
            throw .invalidBody(command: command, field: "files", detail: "an IDENTIFY names 1 to \(Self.maximumFiles) files")
        }
        for file in files { try file.validate(command: command) }
    }
}

/// What a worker found about one file of an IDENTIFY: its SHA-256 with the size and
/// modification time it had when read, or why it could not be read.
public struct FileIdentity: WireBody {
    /// The SHA-256 of the file's bytes: the id of the song it holds.
    public var sha256: SongID?
    /// The file's size in bytes when it was hashed.
    public var size: Int64?
    /// The file's modification time, in nanoseconds since 1970, when it was hashed.
    public var mtimeNs: Int64?
    /// Why the file was not hashed (`not-found`, `forbidden`, `unavailable` when the worker ran
    /// out of time for this request, …): the coordinator hashes it itself.
    public var error: ErrorBody?

    /// A file hashed.
    public init(sha256: SongID, size: Int64, mtimeNs: Int64) {
        self.sha256 = sha256
        self.size = size
        self.mtimeNs = mtimeNs
    }

    /// A file not hashed.
    public init(error: ErrorBody) {
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case sha256, size, error
        case mtimeNs = "mtime_ns"
    }

    public func validate(command: String) throws(ProtocolError) {
        if let error {
            guard sha256 == nil, size == nil, mtimeNs == nil else {
                throw .invalidBody(command: command, field: "files", detail: "a file has either error or sha256, size and mtime_ns")
            }
            try error.validate(command: command)
            return
        }
        guard sha256 != nil, let size, mtimeNs != nil else {
            throw .invalidBody(command: command, field: "files", detail: "a file has either error or sha256, size and mtime_ns")
        }
        guard size >= 0 else { throw .invalidBody(command: command, field: "size", detail: "must be at least 0") }
    }
}

/// IDENTIFIED: a worker's answer to an IDENTIFY, one entry per file in the same order.
public struct IdentifiedBody: WireBody {
    /// The IDENTIFY's `request`.
    public var request: Int64
    public var files: [FileIdentity]

    public init(request: Int64, files: [FileIdentity]) {
        self.request = request
        self.files = files
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.positive(request, field: "request", command: command)
        guard (1...IdentifyBody.maximumFiles).contains(files.count) else {
            throw .invalidBody(command: command, field: "files", detail: "an IDENTIFIED answers 1 to \(IdentifyBody.maximumFiles) files")
        }
        for file in files { try file.validate(command: command) }
    }
}
