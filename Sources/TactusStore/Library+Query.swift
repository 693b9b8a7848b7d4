import Foundation
import GRDB
import TactusModel

extension TempoQuery {
    /// Checks the range, paging and source before the query runs.
    func validate() throws(StoreError) {
        try Library.checkBPM(range.lowerBound, field: "range.lower")
        try Library.checkBPM(range.upperBound, field: "range.upper")
        if let limit, limit < 0 {
            throw .invalidValue(field: "limit", value: "\(limit)", accepted: "a count >= 0")
        }
        if offset < 0 {
            throw .invalidValue(field: "offset", value: "\(offset)", accepted: "a count >= 0")
        }
        if offset > Self.maxOffset {
            throw .invalidValue(field: "offset", value: "\(offset)", accepted: "a count of at most \(Self.maxOffset)")
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

extension Library {
    /// The songs whose tempo lies in `query.range`, each once (a song whose tempo matches
    /// both directly and by an octave is reported with factor 1), ordered and paged as the
    /// query says. Ties are broken by the order songs entered the library.
    ///
    /// The search runs on the `(detector, bpm)` index of `analyses` or the `bpm` index of
    /// `consensus`; with a limit it reads only about `offset + limit` index entries per
    /// octave branch, so its cost hardly depends on the library's size (about a millisecond
    /// over 100,000 songs × 3 detectors: `tactus-bench store`).
    public func query(_ query: TempoQuery) throws(StoreError) -> [TempoMatch] {
        try query.validate()
        let (sql, arguments) = Self.sql(for: query)
        return try read { db in
            let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
            let paths = try Self.presentPaths(of: rows.map { $0["song_id"] as Int64 }, db)
            return try rows.map { row in
                let detectors: [String]
                switch query.source {
                case .consensus, .agreement: detectors = NamesJSON.decode(row["detectors"])
                case .detector(let name): detectors = [name]
                }
                return TempoMatch(
                    song: try SongID.stored(row["sha256"]), bpm: row["bpm"], factor: row["factor"],
                    detector: Self.sourceName(query.source), detectors: detectors, title: row["title"],
                    artist: row["artist"], file: row["file_name"], durationS: row["duration_s"], confidence: row["confidence"],
                    paths: paths[row["song_id"] as Int64] ?? [])
            }
        }
    }

    /// The absolute paths of the present files of the songs `keys`, by song key.
    static func presentPaths(of keys: [Int64], _ db: Database) throws -> [Int64: [String]] {
        var paths = [Int64: [String]]()
        var index = 0
        while index < keys.count {
            let chunk = keys[index..<min(index + 500, keys.count)]
            index += 500
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT song_id, root, path, byte_size, mtime_ns, missing_since FROM song_locations
                    WHERE missing_since IS NULL AND song_id IN (\(marks)) ORDER BY root, path
                    """,
                arguments: StatementArguments(Array(chunk)))
            for row in rows {
                paths[row["song_id"], default: []].append(location(row).absolutePath)
            }
        }
        return paths
    }

    /// SQLite's plan for a query (`EXPLAIN QUERY PLAN`), one line per step.
    func queryPlan(_ query: TempoQuery) throws(StoreError) -> [String] {
        let (sql, arguments) = Self.sql(for: query)
        return try read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }
    }

    static func sourceName(_ source: TempoSource) -> String {
        switch source {
        case .consensus: return "consensus"
        case .detector(let name): return name
        case .agreement: return "agree"
        }
    }

    /// One octave branch of a query: the stored tempi that match the range with `factor`.
    /// Branches are disjoint (a factor-0.5 tempo is below `lo`, a factor-2 one above `hi`),
    /// so a tempo in the range itself always matches with factor 1.
    private struct Branch {
        var factor: String
        var lower: String
        var upper: String
        var exclusion: String?
        var centre: String

        static let direct = Branch(factor: "1.0", lower: ":lo", upper: ":hi", exclusion: nil, centre: ":centre")
        static let half = Branch(factor: "0.5", lower: ":lo / 2", upper: ":hi / 2", exclusion: "< :lo", centre: ":centre / 2")
        static let double = Branch(factor: "2.0", lower: ":lo * 2", upper: ":hi * 2", exclusion: "> :hi", centre: ":centre * 2")

        /// The condition on the stored tempo `column`.
        func matches(_ column: String) -> String {
            "\(column) BETWEEN \(lower) AND \(upper)" + (exclusion.map { " AND \(column) \($0)" } ?? "")
        }
    }

    /// Builds the SQL of a query.
    ///
    /// With a limit, each branch is read outwards from its centre (or upwards from its lowest
    /// tempo when ordering by BPM) along the index, in two scans that stop after
    /// `offset + limit` rows; merging those few rows gives the exact answer without reading
    /// the whole range, so a query costs the same over a thousand songs or a million.
    private static func sql(for query: TempoQuery) -> (String, StatementArguments) {
        let lo = query.range.lowerBound
        let hi = query.range.upperBound
        var arguments: [String: (any DatabaseValueConvertible)?] = [
            "lo": lo, "hi": hi, "centre": (lo + hi) / 2, "limit": query.limit ?? -1, "offset": query.offset,
        ]
        let branches: [Branch] = query.octave ? [.direct, .half, .double] : [.direct]
        func orderKey(bpm: String, factor: String) -> String {
            switch query.order {
            case .closeness: "abs(\(bpm) / \(factor) - :centre)"
            case .bpm: "\(bpm) / \(factor)"
            case .newest: "0.0"  // by song id alone, below (not "0": a whole number in ORDER BY names a column)
            }
        }
        // Ties (and every row, for `newest`) go by the order songs entered the library.
        let songOrder = query.order == .newest ? " DESC" : ""

        let table: String
        var filter = "1"
        var dedupe = ""
        switch query.source {
        case .consensus:
            table = "consensus"
        case .agreement(let minimum):
            table = "consensus"
            filter = "a.detector_count >= :minimum"
            arguments["minimum"] = minimum
        case .detector(let name):
            table = "analyses"
            filter = "a.detector = :detector"
            arguments["detector"] = name
            // A song analysed by several versions or presets of the detector counts once, by its
            // best analysis: a direct match first, then the order of the query, then the oldest row.
            let factorOfOther = "CASE " + branches.map { "WHEN \($0.matches("b.bpm")) THEN \($0.factor)" }.joined(separator: " ")
                + " END"
            dedupe = """
                 AND NOT EXISTS (
                    SELECT 1 FROM (
                        SELECT b.id AS id, b.bpm AS bpm, \(factorOfOther) AS factor FROM analyses b INDEXED BY analyses_identity
                        WHERE b.song_id = a.song_id AND b.detector = a.detector AND b.id <> a.id
                    ) AS o
                    WHERE o.factor IS NOT NULL
                      AND (o.factor <> 1, \(orderKey(bpm: "o.bpm", factor: "o.factor")), o.id)
                        < (FACTOR <> 1, \(orderKey(bpm: "a.bpm", factor: "FACTOR")), a.id))
                """
        }

        var scans = [String]()
        for branch in branches {
            let base = """
                SELECT a.song_id AS song_id, a.bpm AS bpm, \(branch.factor) AS factor FROM \(table) a
                WHERE \(filter) AND \(branch.matches("a.bpm")) AND NOT (SELECT missing FROM songs WHERE id = a.song_id)\(dedupe.replacingOccurrences(of: "FACTOR", with: branch.factor))
                """
            if query.limit == nil {
                scans.append(base)
            } else if query.order == .newest {
                scans.append("SELECT * FROM (\(base) ORDER BY a.song_id DESC LIMIT :limit + :offset)")
            } else if query.order == .bpm {
                scans.append("SELECT * FROM (\(base) ORDER BY a.bpm, a.song_id LIMIT :limit + :offset)")
            } else {
                scans.append("SELECT * FROM (\(base) AND a.bpm >= \(branch.centre) ORDER BY a.bpm, a.song_id LIMIT :limit + :offset)")
                scans.append("SELECT * FROM (\(base) AND a.bpm < \(branch.centre) ORDER BY a.bpm DESC, a.song_id LIMIT :limit + :offset)")
            }
        }
        let inner = """
            SELECT song_id, bpm, factor FROM (
            \(scans.joined(separator: "\nUNION ALL\n"))
            )
            ORDER BY \(orderKey(bpm: "bpm", factor: "factor")), song_id\(songOrder) LIMIT :limit OFFSET :offset
            """
        let fromConsensus = table == "consensus"
        let detectors = fromConsensus ? "c.detectors" : "''"
        let join = fromConsensus ? "JOIN consensus c ON c.song_id = m.song_id" : ""
        let sql = """
            SELECT m.song_id, m.bpm, m.factor, \(fromConsensus ? "c.confidence" : "NULL") AS confidence, \(detectors) AS detectors, s.sha256, s.title, s.artist, s.file_name, s.duration_s
            FROM (\(inner)) AS m JOIN songs s ON s.id = m.song_id \(join)
            ORDER BY \(orderKey(bpm: "m.bpm", factor: "m.factor")), m.song_id\(songOrder)
            """
        return (sql, StatementArguments(arguments))
    }
}
