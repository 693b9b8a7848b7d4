import TactusDetector

/// Whose tempo a query looks at.
public enum TempoSource: Sendable, Hashable, CustomStringConvertible {
    /// Each song's consensus tempo (``Consensus``): the default.
    case consensus
    /// One detector's tempo (any version or preset of it; the closest match counts).
    case detector(String)
    /// The consensus tempo, for songs where at least `minimum` distinct detectors agree on
    /// it (each within 4 % of it).
    case agreement(minimum: Int)

    public var description: String {
        switch self {
        case .consensus: return "consensus"
        case .detector(let name): return name
        case .agreement(let minimum): return "agree>=\(minimum)"
        }
    }
}

/// How query results are ordered (``TempoQuery/descending`` reverses any of them). Ties go
/// by the order songs entered the library.
public enum TempoOrder: String, Sendable, Hashable, CaseIterable {
    /// Closest to the centre of the range first (by the matched tempo).
    case closeness
    /// Slowest first (by the matched tempo).
    case bpm
    /// The songs that entered the library last first.
    case newest
    /// By title (the file name for a song without one), A to Z, ignoring the case of ASCII letters.
    case title
    /// By artist, A to Z, ignoring the case of ASCII letters; songs without one last.
    case artist
    /// Shortest first.
    case duration
    /// Least sure first (the consensus's confidence, or the detector's for a detector's tempo);
    /// songs without one last.
    case confidence
    /// Fewest agreeing detectors first (the detectors that agree on the consensus); only for
    /// the consensus and agreement sources.
    case agreement
}

/// Songs whose tempo lies in a BPM range.
///
/// ```swift
/// // Songs for running at 170 steps per minute, half-time songs included:
/// let songs = try library.query(TempoQuery(range: 165...175, octave: true, limit: 50))
/// ```
public struct TempoQuery: Sendable, Hashable {
    /// The tempi the library accepts anywhere (queries, references, cadences), in BPM.
    public static let acceptedBPM: ClosedRange<Double> = 1...1000

    /// Inclusive at both ends, within ``acceptedBPM``.
    public var range: ClosedRange<Double>
    public var source: TempoSource
    /// Also match songs whose tempo is half (`lo/2...hi/2`, factor 0.5) or double
    /// (`2lo...2hi`, factor 2) a tempo of the range. A tempo in the range itself always
    /// matches with factor 1.
    public var octave: Bool
    public var order: TempoOrder
    /// The reverse of ``order`` (ties too); songs without a title, artist or confidence stay last.
    public var descending: Bool
    /// At most this many songs (nil: all).
    public var limit: Int?
    /// Skip this many songs first (for paging), at most ``maxOffset``.
    public var offset: Int
    /// Only songs whose tempo holds throughout (true) or changes (false), by their consensus'
    /// tempo map; nil: every song. A song whose map is unknown (analysed before maps were made)
    /// matches neither.
    public var stable: Bool?

    /// The largest ``offset`` accepted: far beyond any library, and small enough that
    /// `offset + limit` never overflows SQLite's 64-bit integers.
    public static let maxOffset = 1_000_000_000

    /// The most songs one `query` request may ask a server for (its `limit`); a client pages
    /// beyond it with ``offset``.
    public static let maxRequestLimit = 10_000

    public init(
        range: ClosedRange<Double>, source: TempoSource = .consensus, octave: Bool = false,
        order: TempoOrder = .closeness, descending: Bool = false, limit: Int? = nil, offset: Int = 0, stable: Bool? = nil
    ) {
        self.range = range
        self.source = source
        self.octave = octave
        self.order = order
        self.descending = descending
        self.limit = limit
        self.offset = offset
        self.stable = stable
    }
}

/// A song found by a ``TempoQuery``: the body of `query`'s answer and of playlist entries.
public struct TempoMatch: Sendable, Hashable, Codable {
    public var song: SongID
    /// The song's tempo according to the source.
    public var bpm: Double
    /// The song's tempo divided by the tempo of the range it matched: 1, or with
    /// ``TempoQuery/octave`` 0.5 (the song is at half the range's tempo) or 2 (double).
    public var factor: Double
    /// The detector whose tempo matched, or `consensus`, or `agree`.
    public var detector: String
    /// The detectors behind the tempo: the one detector, or the detectors that agree on the
    /// consensus.
    public var detectors: [String]
    /// How sure the source is of the tempo (0...1): the consensus's confidence for the
    /// `consensus` and `agree` sources (nil for a consensus stored before confidences were),
    /// the analysis's for a detector's tempo.
    public var confidence: Double?
    public var title: String?
    public var artist: String?
    /// The song's file name.
    public var file: String
    public var durationS: Double
    /// The absolute paths of the song's files under the server's library roots that were
    /// present at the last scan (empty for a song that was uploaded): at most
    /// ``maxListedPaths``, the first in order of root and path.
    public var paths: [String]
    /// How many such files there are, when ``paths`` does not list them all (nil when it does).
    public var pathCount: Int?

    /// The most paths a match lists: anyone who may write to a library folder could otherwise
    /// link one song at thousands of long paths and make every listing that holds it larger
    /// than a reply may be.
    public static let maxListedPaths = 16
    /// The song's constant beat grid at its consensus tempo, when it has one that agrees with
    /// the consensus (``BeatGrid/agrees(withConsensus:)``).
    public var beatGrid: BeatGrid?

    /// The tempo in the range that matched: `bpm / factor`.
    public var matchedBPM: Double { bpm / factor }

    enum CodingKeys: String, CodingKey {
        case song, bpm, factor, matchedBPM = "matched_bpm", detector, detectors, confidence, title, artist, file, paths
        case durationS = "duration_s", beatGrid = "beat_grid", pathCount = "path_count"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        song = try container.decode(SongID.self, forKey: .song)
        bpm = try container.decode(Double.self, forKey: .bpm)
        factor = try container.decode(Double.self, forKey: .factor)
        detector = try container.decode(String.self, forKey: .detector)
        detectors = try container.decode([String].self, forKey: .detectors)
        confidence = try container.decodeIfPresent(Double.self, forKey: .confidence)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        artist = try container.decodeIfPresent(String.self, forKey: .artist)
        file = try container.decode(String.self, forKey: .file)
        durationS = try container.decode(Double.self, forKey: .durationS)
        paths = try container.decodeIfPresent([String].self, forKey: .paths) ?? []
        pathCount = try container.decodeIfPresent(Int.self, forKey: .pathCount)
        beatGrid = try container.decodeIfPresent(BeatGrid.self, forKey: .beatGrid)
    }

    /// Every field (``matchedBPM`` is derived).
    public init(
        song: SongID, bpm: Double, factor: Double, detector: String, detectors: [String], title: String?,
        artist: String?, file: String, durationS: Double, confidence: Double? = nil, paths: [String] = [],
        pathCount: Int? = nil, beatGrid: BeatGrid? = nil
    ) {
        self.song = song
        self.bpm = bpm
        self.factor = factor
        self.detector = detector
        self.detectors = detectors
        self.confidence = confidence
        self.title = title
        self.artist = artist
        self.file = file
        self.durationS = durationS
        self.paths = paths
        self.pathCount = pathCount
        self.beatGrid = beatGrid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(song, forKey: .song)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(factor, forKey: .factor)
        try container.encode(matchedBPM, forKey: .matchedBPM)
        try container.encode(detector, forKey: .detector)
        try container.encode(detectors, forKey: .detectors)
        try container.encodeIfPresent(confidence, forKey: .confidence)
        try container.encode(title, forKey: .title)
        try container.encode(artist, forKey: .artist)
        try container.encode(file, forKey: .file)
        try container.encode(durationS, forKey: .durationS)
        try container.encode(paths, forKey: .paths)
        try container.encodeIfPresent(pathCount, forKey: .pathCount)
        try container.encodeIfPresent(beatGrid, forKey: .beatGrid)
    }
}


/// How the matched tempi of every song a ``TempoQuery`` finds are spread (its limit and offset
/// aside): the count in bins of a fixed width, lowest first, empty bins between included.
public struct TempoHistogram: Sendable, Hashable, Codable {
    /// Every song found, whatever the query's limit.
    public var total: Int
    /// Bins of the matched tempo (`lower <= matched_bpm < lower + width`).
    public var bins: [LibraryComparison.Bin]

    public init(total: Int, bins: [LibraryComparison.Bin]) {
        self.total = total
        self.bins = bins
    }

    /// The widths accepted, in BPM.
    public static let binWidths: ClosedRange<Double> = 0.1...1000

    /// Bins of `width` from counts by bin index (`floor(bpm / width)`), empty ones filled in.
    public init(width: Double, counts: [(index: Int, count: Int)]) {
        let sorted = counts.sorted { $0.index < $1.index }
        var bins = [LibraryComparison.Bin]()
        if let first = sorted.first?.index, let last = sorted.last?.index {
            var byIndex = [Int: Int]()
            for (index, count) in sorted { byIndex[index, default: 0] += count }
            bins = (first...last).map { index in
                LibraryComparison.Bin(lower: Double(index) * width, width: width, count: byIndex[index] ?? 0)
            }
        }
        self.init(total: sorted.reduce(0) { $0 + $1.count }, bins: bins)
    }
}
