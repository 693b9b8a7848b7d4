import Foundation
import GRDB
import TactusDetector
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
        if order == .agreement, case .detector = source {
            throw .invalidValue(
                field: "order", value: "agreement",
                accepted: "another order for a detector's tempo (agreement counts the detectors behind the consensus)")
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
        return try read { db in
            let (sql, arguments) = Self.sql(for: query, walkingSongs: try Self.walksSongs(query, db))
            let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
            let keys = rows.map { $0["song_id"] as Int64 }
            let paths = try Self.presentPaths(of: keys, db)
            let grids = try Self.currentBeatGrids(of: keys, db)
            return try rows.map { row in
                let detectors: [String]
                switch query.source {
                case .consensus, .agreement: detectors = NamesJSON.decode(row["detectors"])
                case .detector(let name): detectors = [name]
                }
                return TempoMatch(
                    song: try SongID.stored(row["sha256"]), bpm: row["bpm"], factor: row["factor"],
                    detector: Self.sourceName(query.source), detectors: detectors, title: AudioTags.bounded(row["title"]),
                    artist: AudioTags.bounded(row["artist"]), file: row["file_name"], durationS: row["duration_s"], confidence: row["confidence"],
                    paths: paths[row["song_id"] as Int64]?.listed ?? [],
                    pathCount: paths[row["song_id"] as Int64].flatMap { $0.count > $0.listed.count ? $0.count : nil },
                    beatGrid: grids[row["song_id"] as Int64])
            }
        }
    }

    /// How the matched tempi of every song `query` finds are spread, in bins of `binWidth`
    /// BPM (the query's limit, offset and order aside). One pass over the same index range
    /// as the query without a limit.
    public func histogram(of query: TempoQuery, binWidth: Double) throws(StoreError) -> TempoHistogram {
        try query.validate()
        guard binWidth.isFinite, TempoHistogram.binWidths.contains(binWidth) else {
            throw .invalidValue(
                field: "histogram", value: "\(binWidth)",
                accepted: "a bin width of 0.1 to 1000 BPM")
        }
        var unlimited = query
        unlimited.limit = nil
        unlimited.offset = 0
        let (matches, arguments) = Self.matchesSQL(for: unlimited)
        var named = arguments
        named["width"] = binWidth
        let sql = "SELECT CAST((bpm / factor) / :width AS INTEGER) AS bin, count(*) AS n FROM (\(matches)) GROUP BY bin"
        return try read { db in
            let counts = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(named)).map { row in
                (index: row["bin"] as Int, count: row["n"] as Int)
            }
            return TempoHistogram(width: binWidth, counts: counts)
        }
    }

    /// The absolute paths of the present files of the songs `keys`, by song key: at most
    /// ``TempoMatch/maxListedPaths`` of each song, with how many it has.
    static func presentPaths(of keys: [Int64], _ db: Database) throws -> [Int64: (listed: [String], count: Int)] {
        var paths = [Int64: (listed: [String], count: Int)]()
        try forEachRow(
            of: keys, db,
            sql: { marks in
                """
                SELECT song_id, root, path, byte_size, mtime_ns, missing_since FROM song_locations
                WHERE missing_since IS NULL AND song_id IN (\(marks)) ORDER BY root, path
                """
            }
        ) { row in
            let key: Int64 = row["song_id"]
            var entry = paths[key] ?? ([], 0)
            entry.count += 1
            if entry.listed.count < TempoMatch.maxListedPaths { entry.listed.append(location(row).absolutePath) }
            paths[key] = entry
        }
        return paths
    }

    /// The beat grids of the songs `keys` that agree with their consensus, by song key.
    static func currentBeatGrids(of keys: [Int64], _ db: Database) throws -> [Int64: BeatGrid] {
        var grids = [Int64: BeatGrid]()
        try forEachRow(
            of: keys, db,
            sql: { marks in
                """
                SELECT s.id, s.beat_grid_json, c.bpm FROM songs s JOIN consensus c ON c.song_id = s.id
                WHERE s.beat_grid_json IS NOT NULL AND s.id IN (\(marks))
                """
            }
        ) { row in
            if let grid = StoredJSON<BeatGrid>.decode(row[1]), grid.agrees(withConsensus: row[2]) { grids[row[0]] = grid }
        }
        return grids
    }

    /// Runs `sql` (given the `?` marks of an `IN` list) on `keys` 500 at a time, calling `body`
    /// for each row.
    private static func forEachRow(
        of keys: [Int64], _ db: Database, sql: (String) -> String, _ body: (Row) throws -> Void
    ) throws {
        var index = 0
        while index < keys.count {
            let chunk = keys[index..<min(index + 500, keys.count)]
            index += 500
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            for row in try Row.fetchAll(db, sql: sql(marks), arguments: StatementArguments(Array(chunk))) { try body(row) }
        }
    }

    /// SQLite's plan for a query (`EXPLAIN QUERY PLAN`), one line per step.
    func queryPlan(_ query: TempoQuery) throws(StoreError) -> [String] {
        return try read { db in
            let (sql, arguments) = Self.sql(for: query, walkingSongs: try Self.walksSongs(query, db))
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
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

    /// The parts of a query's SQL: its arguments, its octave branches and the scan of each.
    private struct Parts {
        var arguments: [String: (any DatabaseValueConvertible)?]
        var branches: [Branch]
        /// `consensus` or `analyses`.
        var table: String
        /// The condition on a row `a` of the table besides its tempo (the detector, the agreement).
        var filter: String
        /// One branch's rows (`song_id`, `bpm`, `factor`, `confidence`, and `agreement`, the
        /// consensus's number of agreeing detectors, 1 for a detector's tempo), without order or
        /// limit, read from the covering tempo index.
        var base: (Branch) -> String
        /// Every match of every branch, each song once, unordered: the same rows as the union of
        /// ``base`` over the branches, with a detector's several analyses of a song told apart
        /// by one window over all of them instead of a search for each row.
        var every: String

        var fromConsensus: Bool { table == "consensus" }
    }

    private static func parts(for query: TempoQuery) -> Parts {
        let lo = query.range.lowerBound
        let hi = query.range.upperBound
        var arguments: [String: (any DatabaseValueConvertible)?] = [
            "lo": lo, "hi": hi, "centre": (lo + hi) / 2, "limit": query.limit ?? -1, "offset": query.offset,
        ]
        let branches: [Branch] = query.octave ? [.direct, .half, .double] : [.direct]
        let table: String
        var filter = "1"
        var dedupe = ""
        var bestFirst = ""
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
            if let stable = query.stable {
                filter += " AND a.song_id IN (SELECT song_id FROM consensus WHERE tempo_stable = :stable)"
                arguments["stable"] = stable
            }
            // A song analysed by several versions or presets of the detector counts once, by its
            // best analysis: a direct match first, then the order of the query (closeness for
            // the orders that are not by tempo), then the oldest row. The same whichever way the
            // order runs, so a song shows the same tempo both ways.
            let dedupeOrder: TempoOrder = [.closeness, .bpm, .newest].contains(query.order) ? query.order : .closeness
            let key = { (bpm: String, factor: String) in tempoKey(dedupeOrder, bpm: bpm, factor: factor) }
            bestFirst = "factor <> 1, \(key("bpm", "factor")), analysis"
            let factorOfOther = "CASE " + branches.map { "WHEN \($0.matches("b.bpm")) THEN \($0.factor)" }.joined(separator: " ")
                + " END"
            dedupe = """
                 AND NOT EXISTS (
                    SELECT 1 FROM (
                        SELECT b.id AS id, b.bpm AS bpm, \(factorOfOther) AS factor FROM analyses b INDEXED BY analyses_identity
                        WHERE b.song_id = a.song_id AND b.detector = a.detector AND b.id <> a.id
                    ) AS o
                    WHERE o.factor IS NOT NULL
                      AND (o.factor <> 1, \(key("o.bpm", "o.factor")), o.id)
                        < (FACTOR <> 1, \(key("a.bpm", "FACTOR")), a.id))
                """
        }
        if table == "consensus", let stable = query.stable {
            filter += " AND a.tempo_stable = :stable"
            arguments["stable"] = stable
        }
        let agreement = table == "consensus" ? "a.detector_count" : "1"
        // Songs whose every file is missing are left out: the few of them are listed once (from
        // a partial index) rather than looked up for every row.
        // One branch's rows; `picking`: with each row's analysis and without the search for a
        // better analysis of the song (the window of `every` picks instead).
        func select(_ branch: Branch, picking: Bool) -> String {
            let analysis = picking ? ", \(table == "analyses" ? "a.id" : "NULL") AS analysis" : ""
            let better = picking ? "" : dedupe.replacingOccurrences(of: "FACTOR", with: branch.factor)
            return """
                SELECT a.song_id AS song_id, a.bpm AS bpm, \(branch.factor) AS factor, a.confidence AS confidence, \(agreement) AS agreement\(analysis)
                FROM \(table) a
                WHERE \(filter) AND \(branch.matches("a.bpm")) AND a.song_id NOT IN (SELECT id FROM songs WHERE missing = 1)\(better)
                """
        }
        let base = { (branch: Branch) in select(branch, picking: false) }
        let rows = { (branch: Branch) in select(branch, picking: true) }
        let every = bestFirst.isEmpty
            ? branches.map(base).joined(separator: "\nUNION ALL\n")
            : """
            SELECT song_id, bpm, factor, confidence, agreement FROM (
                SELECT *, row_number() OVER (PARTITION BY song_id ORDER BY \(bestFirst)) AS pick FROM (
                \(branches.map(rows).joined(separator: "\nUNION ALL\n"))
                )
            ) WHERE pick = 1
            """
        return Parts(arguments: arguments, branches: branches, table: table, filter: filter, base: base, every: every)
    }

    /// The sort key of the orders by tempo (closeness, bpm) of a row; `newest` goes by song alone.
    private static func tempoKey(_ order: TempoOrder, bpm: String, factor: String) -> String {
        switch order {
        case .closeness: "abs(\(bpm) / \(factor) - :centre)"
        case .bpm: "\(bpm) / \(factor)"
        default: "0.0"  // by song id alone (not "0": a whole number in ORDER BY names a column)
        }
    }

    /// Every song a query finds (`song_id`, `bpm`, `factor`, `confidence`, `agreement`), unordered and unlimited.
    static func matchesSQL(for query: TempoQuery) -> (String, [String: (any DatabaseValueConvertible)?]) {
        let parts = parts(for: query)
        return (parts.every, parts.arguments)
    }

    /// The song index that gives an order by title, artist or duration (each way), and the
    /// `ORDER BY` that walks it: the same order as sorting the matches gives (artists: songs
    /// without one last either way, so one index each way).
    private static func songIndex(_ order: TempoOrder, descending: Bool) -> (index: String, orderBy: String)? {
        let down = descending ? " DESC" : ""
        switch order {
        case .title: return ("songs_by_title", "COALESCE(NULLIF(s.title, ''), s.file_name) COLLATE NOCASE\(down), s.id\(down)")
        case .duration: return ("songs_by_duration", "s.duration_s\(down), s.id\(down)")
        case .artist where !descending:
            return ("songs_by_artist", "(NULLIF(s.artist, '') IS NULL), NULLIF(s.artist, '') COLLATE NOCASE, s.id")
        case .artist:
            return ("songs_by_artist_descending", "(NULLIF(s.artist, '') IS NOT NULL) DESC, NULLIF(s.artist, '') COLLATE NOCASE DESC, s.id DESC")
        default: return nil
        }
    }

    /// Whether a page by title, artist or duration of the consensus's tempo is found faster by walking
    /// the songs in that order (their index), keeping those in the range, than by sorting every
    /// match of the range: when the matches are dense. Walking reads about
    /// `(offset + limit) × songs / matches` songs, sorting reads every match, so the walk wins
    /// when `matches² > (offset + limit) × songs` (both counted from covering indexes, a few
    /// milliseconds over 100,000 songs).
    static func walksSongs(_ query: TempoQuery, _ db: Database) throws -> Bool {
        guard let limit = query.limit, songIndex(query.order, descending: query.descending) != nil else { return false }
        if case .detector = query.source { return false }
        let parts = parts(for: query)
        let counted = parts.branches.map { branch in
            "SELECT count(*) FROM consensus a WHERE \(parts.filter) AND \(branch.matches("a.bpm"))"
        }.joined(separator: " UNION ALL ")
        let matches = try Int.fetchAll(db, sql: counted, arguments: StatementArguments(parts.arguments)).reduce(0, +)
        let songs = try Int.fetchOne(db, sql: "SELECT count(*) FROM consensus") ?? 0
        return Double(matches) * Double(matches) > Double(query.offset + limit) * Double(songs)
    }

    /// The page of a query by title, artist or duration of the consensus's tempo, walking the songs in
    /// that order (``walksSongs(_:_:)``): `song_id`, `bpm`, `factor`, `confidence`.
    private static func walkingSQL(_ query: TempoQuery, parts: Parts, index: String, orderBy: String) -> String {
        let factor = "CASE " + parts.branches.map { "WHEN \($0.matches("a.bpm")) THEN \($0.factor)" }.joined(separator: " ") + " END"
        return """
            SELECT s.id AS song_id, a.bpm AS bpm, \(factor) AS factor, a.confidence AS confidence
            FROM songs s INDEXED BY \(index) JOIN consensus a ON a.song_id = s.id
            WHERE \(parts.filter) AND (\(factor)) IS NOT NULL AND s.id NOT IN (SELECT id FROM songs WHERE missing = 1)
            ORDER BY \(orderBy) LIMIT :limit OFFSET :offset
            """
    }

    /// Builds the SQL of a query.
    ///
    /// Orders by tempo (closeness, bpm) and `newest` with a limit read each branch outwards
    /// from its centre (or upwards from its lowest tempo when ordering by BPM) along the index,
    /// in scans that stop after `offset + limit` rows; merging those few rows gives the exact
    /// answer without reading the whole range, so a query costs the same over a thousand songs
    /// or a million. The other orders read every match of the range and keep the best
    /// `offset + limit` while sorting (SQLite's sorter with a limit): by confidence and
    /// agreement from the tempo index alone, by title, artist and duration joining each match
    /// to its song. Their cost grows with the number of matches (over 100,000 songs, the whole
    /// library sorted: see the report of `Tests/Web/measure.py`).
    private static func sql(for query: TempoQuery, walkingSongs: Bool) -> (String, StatementArguments) {
        let parts = parts(for: query)
        let down = query.descending ? " DESC" : ""
        let up = query.descending ? "" : " DESC"
        let byTempo = [TempoOrder.closeness, .bpm, .newest].contains(query.order)
        // Ties (and every row, for `newest`) go by the order songs entered the library.
        let songOrder = query.order == .newest ? up : down

        var scans = [String]()
        for branch in parts.branches where query.limit != nil && byTempo {
            let base = parts.base(branch)
            if query.order == .newest {
                scans.append("SELECT * FROM (\(base) ORDER BY a.song_id\(songOrder) LIMIT :limit + :offset)")
            } else if query.order == .bpm {
                scans.append("SELECT * FROM (\(base) ORDER BY a.bpm\(down), a.song_id\(down) LIMIT :limit + :offset)")
            } else {
                // Outwards from the centre (inwards from the edges when descending).
                scans.append("SELECT * FROM (\(base) AND a.bpm >= \(branch.centre) ORDER BY a.bpm\(down), a.song_id\(down) LIMIT :limit + :offset)")
                scans.append("SELECT * FROM (\(base) AND a.bpm < \(branch.centre) ORDER BY a.bpm\(up), a.song_id\(down) LIMIT :limit + :offset)")
            }
        }
        // Every match when the page needs them all; else the few each branch's scans read.
        let union = scans.isEmpty ? parts.every : scans.joined(separator: "\nUNION ALL\n")
        // The sort key over a match `m` and its song `s`.
        let key: String
        var needsSong = false
        switch query.order {
        case .closeness, .bpm, .newest: key = tempoKey(query.order, bpm: "m.bpm", factor: "m.factor") + down
        case .title:
            key = "COALESCE(NULLIF(s.title, ''), s.file_name) COLLATE NOCASE\(down)"
            needsSong = true
        case .artist:
            key = "NULLIF(s.artist, '') COLLATE NOCASE\(down) NULLS LAST"
            needsSong = true
        case .duration:
            key = "s.duration_s\(down)"
            needsSong = true
        case .confidence: key = "m.confidence\(down) NULLS LAST"
        case .agreement: key = "m.agreement\(down)"
        }
        // The page first, over the few columns of the matches (and the song's, to sort by them).
        let walk = walkingSongs ? songIndex(query.order, descending: query.descending) : nil
        let page = walk.map { walkingSQL(query, parts: parts, index: $0.index, orderBy: $0.orderBy) } ?? """
            SELECT m.song_id AS song_id, m.bpm AS bpm, m.factor AS factor, m.confidence AS confidence FROM (
            \(union)
            ) AS m\(needsSong ? " JOIN songs s ON s.id = m.song_id" : "")
            ORDER BY \(key), m.song_id\(songOrder) LIMIT :limit OFFSET :offset
            """
        let fromConsensus = parts.fromConsensus
        let sql = """
            SELECT m.song_id, m.bpm, m.factor, m.confidence, \(fromConsensus ? "c.detectors" : "''") AS detectors, \
            \(fromConsensus ? "c.detector_count" : "1") AS agreement, s.sha256, s.title, s.artist, s.file_name, s.duration_s
            FROM (\(page)) AS m JOIN songs s ON s.id = m.song_id\(fromConsensus ? " JOIN consensus c ON c.song_id = m.song_id" : "")
            ORDER BY \(key.replacingOccurrences(of: "m.agreement", with: "agreement")), m.song_id\(songOrder)
            """
        return (sql, StatementArguments(parts.arguments))
    }
}
