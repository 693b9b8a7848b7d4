import TactusModel

/// `tags`: BPM tags in the files of the server's library, under its library roots: `read`
/// imports each file's BPM tag as its song's reference tempo (source `tag`); `write` writes the
/// library's tempo into each file's tag (checked: the decoded audio must stay identical).
///
/// The songs are `songs` (ids or prefixes of at least 8 hex digits) or, with `all`, the songs
/// of the library in the order they entered it, `limit` of them from `offset`: a client pages
/// through a large library in requests that each end quickly. Only files the server reaches
/// below a library root are read or written; other songs are reported as skipped.
public struct TagsRequest: WireBody {
    /// `read` or `write`.
    public var action: String
    public var songs: [String]?
    public var all: Bool?
    /// With `all`: how many songs to skip, and at most how many to take (1 to ``maxSongs``).
    public var offset: Int?
    public var limit: Int?
    /// `read`: replace reference tempi set by hand or from a CSV file.
    public var replace: Bool?
    /// `write`: the detector whose newest tempo is written; absent: the consensus.
    public var detector: String?
    /// `write`: skip songs whose tempo has a lower confidence (0 to 1).
    public var minConfidence: Double?
    /// `write`: check and report, write nothing.
    public var dryRun: Bool?
    /// `write`: keep each original as `FILE.bak`.
    public var backup: Bool?

    /// The most songs one request takes: writing a file decodes it twice, so a request stays short.
    public static let maxSongs = 16

    public init(
        action: String, songs: [String]? = nil, all: Bool? = nil, offset: Int? = nil, limit: Int? = nil, replace: Bool? = nil,
        detector: String? = nil, minConfidence: Double? = nil, dryRun: Bool? = nil, backup: Bool? = nil
    ) {
        self.action = action
        self.songs = songs
        self.all = all
        self.offset = offset
        self.limit = limit
        self.replace = replace
        self.detector = detector
        self.minConfidence = minConfidence
        self.dryRun = dryRun
        self.backup = backup
    }

    enum CodingKeys: String, CodingKey {
        case action, songs, all, offset, limit, replace, detector, minConfidence = "min_confidence", dryRun = "dry_run", backup
    }

    public func validate(command: String) throws(ProtocolError) {
        guard action == "read" || action == "write" else {
            throw .invalidBody(command: command, field: "action", detail: "must be read or write")
        }
        if let songs {
            guard all != true else { throw .invalidBody(command: command, field: "all", detail: "give either songs or all, not both") }
            guard (1...Self.maxSongs).contains(songs.count) else {
                throw .invalidBody(command: command, field: "songs", detail: "must hold 1 to \(Self.maxSongs) songs")
            }
            for song in songs { try Check.song(song, field: "songs", command: command) }
        } else if all != true {
            throw .invalidBody(command: command, field: "songs", detail: "give songs, or all: true")
        }
        if offset != nil || limit != nil, all != true {
            throw .invalidBody(command: command, field: "offset", detail: "offset and limit go with all")
        }
        if let offset, !(0...TempoQuery.maxOffset).contains(offset) {
            throw .invalidBody(command: command, field: "offset", detail: "must be 0 to \(TempoQuery.maxOffset)")
        }
        if let limit, !(1...Self.maxSongs).contains(limit) {
            throw .invalidBody(command: command, field: "limit", detail: "must be 1 to \(Self.maxSongs)")
        }
        if action == "read", detector != nil || minConfidence != nil || dryRun != nil || backup != nil {
            throw .invalidBody(command: command, field: "action", detail: "detector, min_confidence, dry_run and backup go with write")
        }
        if action == "write", replace != nil {
            throw .invalidBody(command: command, field: "replace", detail: "replace goes with read")
        }
        if let detector { try Check.detector(detector, command: command) }
        if let minConfidence { try Check.finite(minConfidence, field: "min_confidence", in: 0...1, command: command) }
    }
}

/// The answer to `tags`: one report per song, in order; with `all`, how many songs the library
/// holds in all, so a client knows when it has paged through them.
public struct TagsResponse: WireBody {
    public var files: [TagReport]
    /// With `all`: the library's songs in all.
    public var total: Int?

    public init(files: [TagReport], total: Int? = nil) {
        self.files = files
        self.total = total
    }
}
