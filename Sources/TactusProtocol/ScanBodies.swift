import TactusModel

// The JSON bodies of `scan` and `prune`: songs analysed in place under the server's library
// roots, and song bytes no job needs.

/// `scan`: compare the server's library roots (or the given paths below them) with what the
/// library records, and queue the files that are new or changed.
public struct ScanRequest: WireBody {
    /// Files or directories below the server's library roots (absolute, as the server sees
    /// them); absent or empty means every root.
    public var paths: [String]?

    public init(paths: [String]? = nil) {
        self.paths = paths
    }

    public func validate(command: String) throws(ProtocolError) {
        let paths = paths ?? []
        guard paths.count <= 1024 else {
            throw .invalidBody(command: command, field: "paths", detail: "at most 1024 paths")
        }
        for (index, path) in paths.enumerated() {
            try Check.text(path, field: "paths[\(index)]", max: 4096, command: command)
        }
    }
}

/// A file a scan (or a prune) left alone, and why.
public struct ScanSkip: WireBody {
    /// The file's absolute path.
    public var path: String
    public var reason: String
    /// The error code when the file was refused (`unsupported-format`, `too-large`, `unreadable`...).
    public var code: ErrorCode?

    public init(path: String, reason: String, code: ErrorCode? = nil) {
        self.path = path
        self.reason = reason
        self.code = code
    }
}

/// The answer to `scan`: what was found, by kind, and the jobs queued.
public struct ScanSummary: WireBody {
    /// Files at paths the library did not know, with bytes it did not know: queued.
    public var new: Int
    /// Files whose bytes changed since the last scan: the new bytes queued (the old song leaves
    /// query results unless another copy of it is present).
    public var changed: Int
    /// Files found at a new path with the bytes of a song whose old path is gone: the song keeps
    /// its analyses.
    public var moved: Int
    /// Files the library knew that are gone: their songs leave query results.
    public var missing: Int
    /// Files whose size and modification time are those recorded (or whose bytes are).
    public var unchanged: Int
    /// Files at a new path with the bytes of a song that is still present elsewhere (a copy).
    public var copies: Int
    /// Files left alone, each with its reason (not audio, too large, a symbolic link...); in
    /// `scan.progress` events, only those of the batch since the previous event.
    public var skipped: [ScanSkip]
    /// The files left alone, when `skipped` does not list them all: in `scan.progress` events,
    /// those so far; in a server's reply, all of them when there are more than
    /// ``maxListedSkips`` (absent when `skipped` lists every one).
    public var skippedCount: Int?
    /// Jobs queued for new and changed files (and known songs missing an analysis).
    public var queuedJobs: Int
    /// `tactus scan --db` only (never in a server's reply): the files whose analysis failed
    /// during the scan (each failure is stored, as a server stores a failed job's).
    public var failed: [ScanSkip]?
    /// Files found (looked at, once the scan is over).
    public var files: Int
    /// In `scan.progress` events: the files looked at so far (absent in the reply).
    public var looked: Int?
    /// A server's scan only: the files whose SHA-256 its workers computed (IDENTIFY), rather
    /// than the coordinator; absent when it was none.
    public var hashedByWorkers: Int?
    public var seconds: Double

    public init(
        new: Int = 0, changed: Int = 0, moved: Int = 0, missing: Int = 0, unchanged: Int = 0, copies: Int = 0,
        skipped: [ScanSkip] = [], queuedJobs: Int = 0, files: Int = 0, looked: Int? = nil, seconds: Double = 0
    ) {
        self.new = new
        self.changed = changed
        self.moved = moved
        self.missing = missing
        self.unchanged = unchanged
        self.copies = copies
        self.skipped = skipped
        self.queuedJobs = queuedJobs
        self.files = files
        self.looked = looked
        self.seconds = seconds
    }

    /// The most skipped files a server's reply (or a `scan.progress` event) lists: a folder of
    /// 50,000 cover images and notes would otherwise make a reply larger than a client accepts.
    public static let maxListedSkips = 1000
    /// The most bytes of paths and reasons listed (a planted folder's paths may each be 4 KB):
    /// escaped as JSON, even of control characters only, they stay far within a reply.
    public static let maxListedSkipBytes = 256 << 10

    /// The files left alone, listed or not.
    public var skippedTotal: Int { skippedCount ?? skipped.count }

    /// This summary with at most `limit` skipped files listed (the first ones), of at most
    /// `bytes` bytes of paths and reasons, and their total in ``skippedCount`` when some are
    /// left out.
    public func listingSkips(atMost limit: Int = Self.maxListedSkips, bytes: Int = Self.maxListedSkipBytes) -> ScanSummary {
        var listed = 0, listedBytes = 0
        for skip in skipped.prefix(limit) {
            listedBytes += skip.path.utf8.count + skip.reason.utf8.count
            guard listedBytes <= bytes else { break }
            listed += 1
        }
        guard skipped.count > listed else { return self }
        var summary = self
        summary.skippedCount = skippedTotal
        summary.skipped = Array(skipped.prefix(listed))
        return summary
    }

    enum CodingKeys: String, CodingKey {
        case new, changed, moved, missing, unchanged, copies, skipped, files, looked, seconds, failed
        case queuedJobs = "queued_jobs"
        case hashedByWorkers = "hashed_by_workers"
        case skippedCount = "skipped_count"
    }
}

/// `prune`: remove the song bytes (blobs) no active job needs.
public struct PruneRequest: WireBody {
    /// Only count what would be removed.
    public var dryRun: Bool?

    public init(dryRun: Bool? = nil) {
        self.dryRun = dryRun
    }

    enum CodingKeys: String, CodingKey {
        case dryRun = "dry_run"
    }
}

/// The answer to `prune`.
public struct PruneSummary: WireBody {
    /// Blobs removed (or, with `dry_run`, that would be), with the partial files a crash left.
    public var removed: Int
    /// Their bytes.
    public var removedBytes: Int64
    /// Blobs kept because an active job needs them.
    public var kept: Int
    public var dryRun: Bool

    public init(removed: Int, removedBytes: Int64, kept: Int, dryRun: Bool) {
        self.removed = removed
        self.removedBytes = removedBytes
        self.kept = kept
        self.dryRun = dryRun
    }

    enum CodingKeys: String, CodingKey {
        case removed, kept
        case removedBytes = "removed_bytes", dryRun = "dry_run"
    }
}
