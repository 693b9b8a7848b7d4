import TactusModel

// The bodies of the library commands (`query`, `compare`, `playlist`, `truth`). Their answers
// are the library's own value types (TactusModel), so the wire JSON is exactly what the offline
// commands print with `--json`.

/// `query`: songs whose tempo lies in `min_bpm...max_bpm` (inclusive).
///
/// The tempo is the consensus's unless `detector` names one detector or `agree` asks for
/// songs on which at least that many detectors agree. With `octave`, songs at half or double
/// a tempo in the range match too (each match carries its `factor`).
public struct QueryRequest: WireBody {
    public var minBpm: Double
    public var maxBpm: Double
    public var detector: String?
    public var agree: Int?
    public var octave: Bool?
    /// A ``TempoOrder``: `closeness` (to the range's centre, the default), `bpm`, `newest`,
    /// `title`, `artist`, `duration`, `confidence` or `agreement`.
    public var order: String?
    /// The reverse of `order` (default false).
    public var descending: Bool?
    public var limit: Int?
    public var offset: Int?
    /// Also answer the histogram of every song found, in bins of this many BPM (0.1 to 1000).
    public var histogram: Double?
    /// Only songs whose tempo holds (true) or changes (false), by their tempo map.
    public var stable: Bool?

    public init(
        minBpm: Double, maxBpm: Double, detector: String? = nil, agree: Int? = nil, octave: Bool? = nil,
        order: String? = nil, descending: Bool? = nil, limit: Int? = nil, offset: Int? = nil, histogram: Double? = nil,
        stable: Bool? = nil
    ) {
        self.minBpm = minBpm
        self.maxBpm = maxBpm
        self.detector = detector
        self.agree = agree
        self.octave = octave
        self.order = order
        self.descending = descending
        self.limit = limit
        self.offset = offset
        self.histogram = histogram
        self.stable = stable
    }

    /// The query the wire body stands for.
    public init(_ query: TempoQuery) {
        var detector: String?
        var agree: Int?
        switch query.source {
        case .consensus: break
        case .detector(let name): detector = name
        case .agreement(let minimum): agree = minimum
        }
        self.init(
            minBpm: query.range.lowerBound, maxBpm: query.range.upperBound, detector: detector, agree: agree,
            octave: query.octave, order: query.order.rawValue, descending: query.descending ? true : nil, limit: query.limit,
            offset: query.offset, stable: query.stable)
    }

    enum CodingKeys: String, CodingKey {
        case detector, agree, octave, order, descending, limit, offset, histogram, stable
        case minBpm = "min_bpm", maxBpm = "max_bpm"
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.finite(minBpm, field: "min_bpm", in: 1...1000, command: command)
        try Check.finite(maxBpm, field: "max_bpm", in: minBpm...1000, command: command)
        if let detector { try Check.detector(detector, command: command) }
        if let agree, !(1...64).contains(agree) {
            throw .invalidBody(command: command, field: "agree", detail: "must be 1 to 64 detectors")
        }
        if detector != nil && agree != nil {
            throw .invalidBody(command: command, field: "agree", detail: "give either detector or agree, not both")
        }
        if let order, TempoOrder(rawValue: order) == nil {
            throw .invalidBody(
                command: command, field: "order", detail: "must be one of \(TempoOrder.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if order == TempoOrder.agreement.rawValue && detector != nil {
            throw .invalidBody(
                command: command, field: "order", detail: "agreement is the consensus's: not with detector (give agree or neither)")
        }
        if let histogram { try Check.finite(histogram, field: "histogram", in: TempoHistogram.binWidths, command: command) }
        if let limit, !(0...TempoQuery.maxRequestLimit).contains(limit) {
            throw .invalidBody(command: command, field: "limit", detail: "must be 0 to \(TempoQuery.maxRequestLimit)")
        }
        if let offset, offset < 0 { throw .invalidBody(command: command, field: "offset", detail: "must not be negative") }
        if let offset, offset > TempoQuery.maxOffset {
            throw .invalidBody(command: command, field: "offset", detail: "must be at most \(TempoQuery.maxOffset)")
        }
    }

    /// The library query (call after ``validate(command:)``).
    public var tempoQuery: TempoQuery {
        let source: TempoSource = detector.map { .detector($0) } ?? agree.map { .agreement(minimum: $0) } ?? .consensus
        return TempoQuery(
            range: minBpm...maxBpm, source: source, octave: octave ?? false,
            order: order.flatMap(TempoOrder.init(rawValue:)) ?? .closeness, descending: descending ?? false, limit: limit ?? 100,
            offset: offset ?? 0, stable: stable)
    }
}

/// The answer to `query`: the matching songs, in the requested order, and the histogram of
/// all of them when the request asked for it.
public struct SongList: WireBody {
    public var songs: [TempoMatch]
    public var histogram: TempoHistogram?

    public init(songs: [TempoMatch], histogram: TempoHistogram? = nil) {
        self.songs = songs
        self.histogram = histogram
    }
}

/// `compare`: one song's results side by side (`song`: its id or a unique prefix of at least
/// 8 hex digits), or, without `song`, the whole library, its tempo histogram in bins of
/// `bin_width` BPM (default 10).
public struct CompareRequest: WireBody {
    public var song: String?
    /// The width of the library histogram's bins, in BPM (0.1 to 1000); only without `song`.
    public var binWidth: Double?

    public init(song: String? = nil, binWidth: Double? = nil) {
        self.song = song
        self.binWidth = binWidth
    }

    /// The results of the song `song`, named by its id, side by side.
    public init(song: SongID) {
        self.init(song: song.hex)
    }

    enum CodingKeys: String, CodingKey {
        case song
        case binWidth = "bin_width"
    }

    public func validate(command: String) throws(ProtocolError) {
        if let song { try Check.song(song, command: command) }
        if let binWidth { try Check.finite(binWidth, field: "bin_width", in: 0.1...1000, command: command) }
    }
}

/// The answer to `compare`: `song` when one was named, `library` otherwise.
public struct CompareResponse: WireBody {
    public var song: SongComparison?
    public var library: LibraryComparison?

    public init(song: SongComparison? = nil, library: LibraryComparison? = nil) {
        self.song = song
        self.library = library
    }
}

/// `playlist`: songs whose tempo (or half or double) is within `tolerance` of a step cadence,
/// filling `minutes` at `cadence`, or following `profile` (`10m@150,5m@170`), never repeating
/// a song.
public struct PlaylistQuery: WireBody {
    public var cadence: Double?
    public var minutes: Double?
    public var profile: String?
    /// A fraction (0.04 = 4 %).
    public var tolerance: Double?
    /// The detector whose tempo counts; absent means the consensus.
    public var detector: String?
    /// True: only songs within the tolerance, a segment whose songs run out stays short.
    /// Absent or false: such a segment is filled from the songs nearest its cadence.
    public var strict: Bool?

    public init(
        cadence: Double? = nil, minutes: Double? = nil, profile: String? = nil, tolerance: Double? = nil, detector: String? = nil,
        strict: Bool? = nil
    ) {
        self.cadence = cadence
        self.minutes = minutes
        self.profile = profile
        self.tolerance = tolerance
        self.detector = detector
        self.strict = strict
    }

    public func validate(command: String) throws(ProtocolError) {
        if (cadence == nil) == (profile == nil) {
            throw .invalidBody(command: command, field: "cadence", detail: "give exactly one of cadence and profile")
        }
        if let cadence { try Check.finite(cadence, field: "cadence", in: 1...1000, command: command) }
        if let minutes { try Check.finite(minutes, field: "minutes", in: 0.01...100_000, command: command) }
        if let profile { try Check.text(profile, field: "profile", max: 4096, command: command) }
        if let tolerance { try Check.finite(tolerance, field: "tolerance", in: 0.001...0.49, command: command) }
        if let detector { try Check.detector(detector, command: command) }
    }

    /// The library request; a malformed profile is an error naming it.
    public func playlistRequest(command: String = "playlist") throws(ProtocolError) -> PlaylistRequest {
        let cadenceProfile: CadenceProfile
        if let profile {
            do {
                cadenceProfile = try CadenceProfile(parsing: profile)
            } catch {
                throw .invalidBody(command: command, field: "profile", detail: error.description)
            }
        } else {
            cadenceProfile = .constant(cadence: cadence ?? 0, minutes: minutes ?? 30)
        }
        return PlaylistRequest(
            profile: cadenceProfile, tolerance: tolerance ?? 0.04, source: detector.map { .detector($0) } ?? .consensus,
            strict: strict ?? false)
    }
}

/// The answer to `playlist`.
public struct PlaylistResponse: WireBody {
    public var playlist: Playlist

    public init(playlist: Playlist) {
        self.playlist = playlist
    }
}

/// `truth`: a song's reference tempo; sets it first when `bpm` is given.
public struct TruthRequest: WireBody {
    /// The song: its id or a unique prefix of at least 8 hex digits.
    public var song: String
    public var bpm: Double?

    public init(song: String, bpm: Double? = nil) {
        self.song = song
        self.bpm = bpm
    }

    /// The reference tempo of the song `song`, named by its id.
    public init(song: SongID, bpm: Double? = nil) {
        self.init(song: song.hex, bpm: bpm)
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.song(song, command: command)
        if let bpm { try Check.finite(bpm, field: "bpm", in: 1...1000, command: command) }
    }
}

/// `truth-import`: the reference tempi of many songs, set all or nothing (`tactus truth import`
/// with a server: the client reads the CSV, hashes the files it names and resolves its other
/// names first, so the request names every song by its id).
public struct TruthImportRequest: WireBody {
    /// What the tempi come from, recorded with each (`tactus truth import` sends `csv:NAME`
    /// with the CSV's file name): 1 to 255 bytes of UTF-8.
    public var source: String
    /// 1 to ``maxReferences`` songs with their tempi; a song given twice takes the last.
    public var references: [TruthReference]

    /// The most references one request may carry: a request of ids and tempi stays far under a
    /// frame's limit, and the library sets them in one transaction.
    public static let maxReferences = 5_000

    public init(source: String, references: [TruthReference]) {
        self.source = source
        self.references = references
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.text(source, field: "source", max: 255, command: command)
        guard (1...Self.maxReferences).contains(references.count) else {
            throw .invalidBody(command: command, field: "references", detail: "must hold 1 to \(Self.maxReferences) references")
        }
        for reference in references { try Check.finite(reference.bpm, field: "references.bpm", in: 1...1000, command: command) }
    }
}

/// A song's reference tempo in a `truth-import`.
public struct TruthReference: Codable, Sendable, Hashable {
    public var song: SongID
    public var bpm: Double

    public init(song: SongID, bpm: Double) {
        self.song = song
        self.bpm = bpm
    }
}

/// The answer to `truth-import`: how many reference tempi were set.
public struct TruthImportResponse: WireBody {
    public var imported: Int

    public init(imported: Int) {
        self.imported = imported
    }
}

/// The answer to `truth`: the song's reference tempo, absent when none is known.
public struct TruthResponse: WireBody {
    public var song: SongID
    public var reference: ReferenceTempo?

    public init(song: SongID, reference: ReferenceTempo?) {
        self.song = song
        self.reference = reference
    }
}
