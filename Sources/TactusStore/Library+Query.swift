import Foundation
import GRDB
import TactusAudio

/// Whose tempo a query looks at.
public enum TempoSource: Sendable, Hashable, CustomStringConvertible {
    /// Each song's consensus tempo (``Consensus``): the default.
    case consensus
    /// One detector's tempo (any version or preset of it; the closest match counts).
    case detector(String)
    /// At least `minimum` distinct detectors whose tempi fall in the range with the same
    /// octave factor; the song's tempo is their mean.
    case agreement(minimum: Int)

    public var description: String {
        switch self {
        case .consensus: return "consensus"
        case .detector(let name): return name
        case .agreement(let minimum): return "agree>=\(minimum)"
        }
    }
}

/// How query results are ordered.
public enum TempoOrder: String, Sendable, Hashable, CaseIterable {
    /// Closest to the centre of the range first (by the matched tempo).
    case closeness
    /// Slowest first (by the matched tempo).
    case bpm
}

/// Songs whose tempo lies in a BPM range.
///
/// ```swift
/// // Songs for running at 170 steps per minute, half-time songs included:
/// let songs = try library.query(TempoQuery(range: 165...175, octave: true, limit: 50))
/// ```
public struct TempoQuery: Sendable, Hashable {
    /// Inclusive at both ends, within ``Library/acceptedBPM``.
    public var range: ClosedRange<Double>
    public var source: TempoSource
    /// Also match songs whose tempo is half (`lo/2...hi/2`, factor 0.5) or double
    /// (`2lo...2hi`, factor 2) a tempo of the range. A tempo in the range itself always
    /// matches with factor 1.
    public var octave: Bool
    public var order: TempoOrder
    /// At most this many songs (nil: all).
    public var limit: Int?
    /// Skip this many songs first (for paging).
    public var offset: Int

    public init(
        range: ClosedRange<Double>, source: TempoSource = .consensus, octave: Bool = false,
        order: TempoOrder = .closeness, limit: Int? = nil, offset: Int = 0
    ) {
        self.range = range
        self.source = source
        self.octave = octave
        self.order = order
        self.limit = limit
        self.offset = offset
    }

    func validate() throws(StoreError) {
        try Library.checkBPM(range.lowerBound, field: "range.lower")
        try Library.checkBPM(range.upperBound, field: "range.upper")
        if let limit, limit < 0 {
            throw .invalidValue(field: "limit", value: "\(limit)", accepted: "a count >= 0")
        }
        if offset < 0 {
            throw .invalidValue(field: "offset", value: "\(offset)", accepted: "a count >= 0")
        }
        switch source {
        case .consensus: break
        case .detector(let name):
            if name.isEmpty { throw .invalidValue(field: "detector", value: "\"\"", accepted: "a detector name") }
        case .agreement(let minimum):
            if minimum < 1 {
                throw .invalidValue(field: "agree", value: "\(minimum)", accepted: "a number of detectors >= 1")
            }
        }
    }
}

/// A song found by a ``TempoQuery``.
public struct TempoMatch: Sendable, Hashable, Codable {
    public var song: SongID
    /// The song's tempo according to the source.
    public var bpm: Double
    /// The song's tempo divided by the tempo of the range it matched: 1, or with
    /// ``TempoQuery/octave`` 0.5 (the song is at half the range's tempo) or 2 (double).
    public var factor: Double
    /// The detector whose tempo matched, or `consensus`, or `agree`.
    public var detector: String
    /// The detectors behind the tempo: the one detector, the consensus' agreeing detectors,
    /// or those that agree.
    public var detectors: [String]
    public var title: String?
    public var artist: String?
    /// The song's file name.
    public var file: String
    public var durationS: Double

    /// The tempo in the range that matched: `bpm / factor`.
    public var matchedBPM: Double { bpm / factor }

    enum CodingKeys: String, CodingKey {
        case song, bpm, factor, matchedBPM = "matched_bpm", detector, detectors, title, artist, file
        case durationS = "duration_s"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        song = try container.decode(SongID.self, forKey: .song)
        bpm = try container.decode(Double.self, forKey: .bpm)
        factor = try container.decode(Double.self, forKey: .factor)
        detector = try container.decode(String.self, forKey: .detector)
        detectors = try container.decode([String].self, forKey: .detectors)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        artist = try container.decodeIfPresent(String.self, forKey: .artist)
        file = try container.decode(String.self, forKey: .file)
        durationS = try container.decode(Double.self, forKey: .durationS)
    }

    init(
        song: SongID, bpm: Double, factor: Double, detector: String, detectors: [String], title: String?,
        artist: String?, file: String, durationS: Double
    ) {
        self.song = song
        self.bpm = bpm
        self.factor = factor
        self.detector = detector
        self.detectors = detectors
        self.title = title
        self.artist = artist
        self.file = file
        self.durationS = durationS
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(song, forKey: .song)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(factor, forKey: .factor)
        try container.encode(matchedBPM, forKey: .matchedBPM)
        try container.encode(detector, forKey: .detector)
        try container.encode(detectors, forKey: .detectors)
        try container.encode(title, forKey: .title)
        try container.encode(artist, forKey: .artist)
        try container.encode(file, forKey: .file)
        try container.encode(durationS, forKey: .durationS)
    }
}

extension Library {
    /// The songs whose tempo lies in `query.range`, each once (a song whose tempo matches
    /// both directly and by an octave is reported with factor 1), ordered and paged as the
    /// query says. Ties are broken by the order songs entered the library.
    ///
    /// The search runs on the `(detector, bpm)` index of `analyses` or the `bpm` index of
    /// `consensus`, so it takes milliseconds even over a million analyses.
    public func query(_ query: TempoQuery) throws(StoreError) -> [TempoMatch] {
        try query.validate()
        let (sql, arguments) = Self.sql(for: query)
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let detectors: [String]
                switch query.source {
                case .consensus: detectors = NamesJSON.decode(row["detectors"])
                case .detector(let name): detectors = [name]
                case .agreement: detectors = (row["detectors"] as String).split(separator: ",").map(String.init).sorted()
                }
                return TempoMatch(
                    song: try SongID.stored(row["sha256"]), bpm: row["bpm"], factor: row["factor"],
                    detector: Self.sourceName(query.source), detectors: detectors, title: row["title"],
                    artist: row["artist"], file: row["file_name"], durationS: row["duration_s"])
            }
        }
    }

    static func sourceName(_ source: TempoSource) -> String {
        switch source {
        case .consensus: return "consensus"
        case .detector(let name): return name
        case .agreement: return "agree"
        }
    }

    /// Builds the SQL of a query. Each octave branch is a range scan of the index; the
    /// branches are disjoint (a factor-0.5 tempo is below `lo`, a factor-2 one above `hi`),
    /// so the factor-1 match wins when ranges overlap.
    private static func sql(for query: TempoQuery) -> (String, StatementArguments) {
        let lo = query.range.lowerBound
        let hi = query.range.upperBound
        var arguments: [String: (any DatabaseValueConvertible)?] = [
            "lo": lo, "hi": hi, "centre": (lo + hi) / 2,
            "limit": query.limit ?? -1, "offset": query.offset,
        ]
        func branches(table: String, columns: String, filter: String) -> String {
            var parts = ["SELECT \(columns), 1.0 AS factor FROM \(table) WHERE \(filter) AND bpm BETWEEN :lo AND :hi"]
            if query.octave {
                parts.append(
                    "SELECT \(columns), 0.5 AS factor FROM \(table) WHERE \(filter) AND bpm BETWEEN :lo / 2 AND :hi / 2 AND bpm < :lo")
                parts.append(
                    "SELECT \(columns), 2.0 AS factor FROM \(table) WHERE \(filter) AND bpm BETWEEN :lo * 2 AND :hi * 2 AND bpm > :hi")
            }
            return parts.joined(separator: "\nUNION ALL\n")
        }
        // The key a match is ordered by; `factor <> 1` first so a direct match beats an octave one.
        let distance = "abs(bpm / factor - :centre)"
        let orderKey = query.order == .closeness ? distance : "bpm / factor"
        let inner: String
        switch query.source {
        case .consensus:
            inner = """
                SELECT song_id, bpm, factor, detectors FROM (
                \(branches(table: "consensus", columns: "song_id, bpm, detectors", filter: "1"))
                )
                ORDER BY \(orderKey), song_id LIMIT :limit OFFSET :offset
                """
        case .detector(let name):
            arguments["detector"] = name
            inner = """
                SELECT song_id, bpm, factor, '' AS detectors, min((factor <> 1) * 10000 + \(distance)) FROM (
                \(branches(table: "analyses", columns: "song_id, bpm", filter: "detector = :detector"))
                )
                GROUP BY song_id
                ORDER BY \(orderKey), song_id LIMIT :limit OFFSET :offset
                """
        case .agreement(let minimum):
            arguments["minimum"] = minimum
            inner = """
                SELECT song_id, bpm, factor, detectors, min((factor <> 1) * 10000 - n) FROM (
                    SELECT song_id, factor, avg(bpm) AS bpm, group_concat(DISTINCT detector) AS detectors,
                           count(DISTINCT detector) AS n
                    FROM (
                \(branches(table: "analyses", columns: "song_id, detector, bpm", filter: "detector IN (SELECT name FROM names)"))
                    )
                    GROUP BY song_id, factor HAVING n >= :minimum
                )
                GROUP BY song_id
                ORDER BY \(orderKey), song_id LIMIT :limit OFFSET :offset
                """
        }
        // The detectors' names, found by skipping through the (detector, bpm) index.
        let names = """
            WITH RECURSIVE names(name) AS (
                SELECT (SELECT min(detector) FROM analyses)
                UNION ALL
                SELECT (SELECT min(detector) FROM analyses WHERE detector > name) FROM names WHERE name IS NOT NULL
            )
            """
        let needsNames: Bool
        if case .agreement = query.source { needsNames = true } else { needsNames = false }
        let sql = """
            \(needsNames ? names : "")
            SELECT m.bpm, m.factor, m.detectors, s.sha256, s.title, s.artist, s.file_name, s.duration_s
            FROM (\(inner)) AS m JOIN songs s ON s.id = m.song_id
            ORDER BY \(orderKey.replacingOccurrences(of: "bpm", with: "m.bpm").replacingOccurrences(of: "factor", with: "m.factor")), m.song_id
            """
        return (sql, StatementArguments(arguments))
    }
}
