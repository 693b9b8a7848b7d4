import Foundation
import GRDB
import TactusDetector
import TactusModel

extension Library {
    /// The song with this id, or nil.
    public func song(_ id: SongID) throws(StoreError) -> SongRecord? {
        try readStatement { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Self.songColumns) FROM songs WHERE sha256 = ?"), arguments: [id])
                .map { try Self.songRecord($0) }
        }
    }

    /// Every analysis of a song, sorted by detector, preset and version. The per-window
    /// series and the beats are read only when `windows` is true (they are the bulk of the data).
    public func analyses(of song: SongID, windows: Bool = false) throws(StoreError) -> [StoredAnalysis] {
        try read { db in
            let key = try Self.songKey(song, db)
            return try Row.fetchAll(db, sql: "SELECT \(Self.analysisColumns(windows: windows)) FROM analyses WHERE song_id = ?", arguments: [key])
                .map { try Self.storedAnalysis($0, song: song, windows: windows) }
                .sorted { ($0.record.label, $0.record.analysis.version) < ($1.record.label, $1.record.analysis.version) }
        }
    }

    /// The stored analysis of a song by a detector with exactly this version and these
    /// parameters, or nil: what a coordinator checks before analysing a song again.
    public func analysis(
        of song: SongID, detector: String, version: String, params: ParameterSet, windows: Bool = false
    ) throws(StoreError) -> StoredAnalysis? {
        let hash = AnalysisRecord.hash(canonicalJSON: params.canonicalJSON)
        return try readStatement { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.analysisColumns(windows: windows)) FROM analyses JOIN songs ON songs.id = analyses.song_id
                        WHERE songs.sha256 = ? AND detector = ? AND detector_version = ? AND params_hash = ?
                        """),
                arguments: [song, detector, version, hash]
            ).map { try Self.storedAnalysis($0, song: song, windows: windows) }
        }
    }

    /// The consensus of a song's analyses (nil `bpm` when no detector found a tempo), or nil
    /// when the song is not in the library.
    public func consensus(of song: SongID) throws(StoreError) -> ConsensusTempo? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT c.bpm, c.detectors, c.confidence, c.tempo_map_json FROM consensus c JOIN songs s ON s.id = c.song_id
                    WHERE s.sha256 = ?
                    """,
                arguments: [song]
            ).map { ConsensusTempo(bpm: $0[0], detectors: NamesJSON.decode($0[1]), confidence: $0[2], tempoMap: StoredJSON<TempoMap>.decode($0[3])) }
        }
    }

    /// The songs in the order they entered the library, `limit` of them from `offset`.
    public func songIDs(offset: Int, limit: Int) throws(StoreError) -> [SongID] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT sha256 FROM songs ORDER BY id LIMIT ? OFFSET ?", arguments: [limit, offset])
                .map { try SongID.stored($0) }
        }
    }

    /// How many songs, analyses and reference tempi the library holds.
    public func counts() throws(StoreError) -> LibraryCounts {
        try read { db in
            LibraryCounts(
                songs: try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0,
                analyses: try Int.fetchOne(db, sql: "SELECT count(*) FROM analyses") ?? 0,
                references: try Int.fetchOne(db, sql: "SELECT count(*) FROM reference_tempi") ?? 0)
        }
    }

    /// Finds the song a person means by `name`: a file on this machine (its bytes are hashed),
    /// else whatever ``resolveName(_:)`` accepts. What the `--db` commands use.
    public func resolveSong(_ name: String) throws(StoreError) -> SongID {
        try resolve(name).song
    }

    /// ``resolveSong(_:)`` with how the name was recognised and the song's stored file name.
    public func resolve(_ name: String) throws(StoreError) -> (song: SongID, file: String, by: SongResolution.Kind) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory), !isDirectory.boolValue {
            let id = try SongID.ofFile(atPath: name)
            guard let record = try song(id) else { throw .unknownSong(name) }
            return (id, record.fileName, .content)
        }
        return try resolveName(name)
    }

    /// Finds the song named by `name` without touching the file system (what a server uses
    /// for names that come from its clients): a SHA-256 or a unique prefix of at least 8 hex
    /// digits, else a stored path (a root and the path below it, or the path below a root),
    /// else the file name of exactly one song.
    ///
    /// Throws ``StoreError/ambiguousName(_:candidates:)`` listing the songs when several have
    /// that path or file name, ``StoreError/unknownSong(_:)`` when none matches.
    public func resolveName(_ name: String) throws(StoreError) -> (song: SongID, file: String, by: SongResolution.Kind) {
        guard !name.isEmpty else { throw .invalidSongName(name, reason: "empty") }
        var idError: StoreError?
        do {
            let id = try resolveSongID(name)
            return (id, try song(id)?.fileName ?? "", name.count == 64 ? .id : .prefix)
        } catch {
            switch error {
            case .unknownSong, .invalidSongName: idError = error
            default: throw error
            }
        }
        if name.contains("/") {
            // A stored path: absolute (root and path), or relative to a root.
            let located = try read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT s.sha256, s.file_name FROM song_locations l JOIN songs s ON s.id = l.song_id
                        WHERE l.path = :name
                           OR (CASE WHEN substr(l.root, -1) = '/' THEN l.root || l.path ELSE l.root || '/' || l.path END) = :name
                        ORDER BY s.sha256 LIMIT :limit
                        """,
                    arguments: ["name": name, "limit": SongResolution.maxCandidates + 1])
            }
            if located.count == 1 { return (try SongID.stored(located[0]["sha256"]), located[0]["file_name"], .path) }
            if located.count > 1 { throw .ambiguousName(name, candidates: try Self.candidates(located)) }
        }
        // A file name: the one the song was submitted or first found under, or the name of one
        // of its present files (a song renamed on disk is found by its new name).
        let named = try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT sha256, file_name FROM songs
                    WHERE file_name = :name
                       OR id IN (
                           SELECT song_id FROM song_locations WHERE missing_since IS NULL
                           AND (path = :name OR substr(path, -length(:name) - 1) = '/' || :name))
                    ORDER BY sha256 LIMIT :limit
                    """,
                arguments: ["name": name, "limit": SongResolution.maxCandidates + 1])
        }
        switch named.count {
        case 0:
            guard case .invalidSongName(_, let reason)? = idError, !reason.hasPrefix("not a SHA-256") else { throw .unknownSong(name) }
            throw .invalidSongName(name, reason: "not a stored path or file name, and " + reason)
        case 1:
            return (try SongID.stored(named[0]["sha256"]), named[0]["file_name"], .fileName)
        default:
            throw .ambiguousName(name, candidates: try Self.candidates(named))
        }
    }

    /// The songs of `rows` (`sha256`, `file_name`) as candidates of an ambiguous name.
    private static func candidates(_ rows: [Row]) throws(StoreError) -> [SongResolution.Candidate] {
        var candidates = [SongResolution.Candidate]()
        for row in rows.prefix(SongResolution.maxCandidates) {
            candidates.append(SongResolution.Candidate(song: try SongID.stored(row["sha256"]), file: row["file_name"]))
        }
        return candidates
    }

    /// Finds the song whose id is `name` or starts with it (at least 8 hex digits), never
    /// touching the file system: what a server uses for names that come from its clients.
    public func resolveSongID(_ name: String) throws(StoreError) -> SongID {
        let prefix = name.lowercased()
        guard SongID.isHexPrefix(prefix), !prefix.isEmpty else {
            throw .invalidSongName(name, reason: "not a SHA-256 or a prefix of one")
        }
        guard prefix.count >= 8 else {
            throw .invalidSongName(name, reason: "a SHA-256 prefix needs at least 8 hex digits")
        }
        guard prefix.count <= 64 else {
            throw .invalidSongName(name, reason: "longer than a SHA-256 (64 hex digits)")
        }
        let matches = try read { db in
            try String.fetchAll(
                db, sql: "SELECT sha256 FROM songs WHERE sha256 >= ? AND sha256 < ? LIMIT 2",
                arguments: [prefix, prefix + "g"])
        }
        switch matches.count {
        case 0: throw .unknownSong(name)
        case 1: return try SongID.stored(matches[0])
        default:
            let count = try read { db in
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM songs WHERE sha256 >= ? AND sha256 < ?",
                    arguments: [prefix, prefix + "g"]) ?? 0
            }
            throw .ambiguousSong(prefix: name, matches: count)
        }
    }

    // MARK: - Rows

    /// The columns of `songs` that ``songRecord(_:)`` reads. An envelope larger than any song's
    /// (a library file edited by hand) is not copied out of the file: it reads as none.
    static let songColumns = """
        sha256, file_name, byte_size, format, codec, sample_rate, channels, duration_s, title, artist, album, genre,
        year, added_at, envelope_hop_s, beat_grid_json,
        CASE WHEN length(envelope) <= \(4 * PackedEnvelope.maximumValues) THEN envelope END AS envelope
        """

    /// The columns of `analyses` that ``storedAnalysis(_:song:windows:)`` reads: with
    /// `windows`, the per-window series and the beats too; without, neither is copied out of
    /// the file (they are the bulk of an analysis). Values larger than an analysis may hold (a
    /// library file edited by hand) are not copied either: such candidates, windows and beats
    /// read as none, and text is cut.
    static func analysisColumns(windows: Bool) -> String {
        windows ? analysisColumnsWithSeries : analysisColumnsWithoutSeries
    }

    private static let analysisColumnsWithoutSeries = """
        analyses.detector, analyses.detector_version, analyses.params_hash, analyses.status, analyses.bpm,
        analyses.confidence, analyses.seconds, analyses.analyzed_at,
        CASE WHEN length(analyses.params_json) <= \(Library.maxParametersCharacters) THEN analyses.params_json ELSE '{}' END AS params_json,
        substr(analyses.worker, 1, \(Library.maxShownTextCharacters)) AS worker,
        substr(analyses.reason, 1, \(Library.maxShownTextCharacters)) AS reason,
        substr(analyses.error_code, 1, \(Library.maxShownTextCharacters)) AS error_code,
        substr(analyses.error_message, 1, \(Library.maxShownTextCharacters)) AS error_message,
        CASE WHEN length(analyses.candidates_json) <= \(CandidatesJSON.maximumTextBytes) THEN analyses.candidates_json ELSE '[]' END AS candidates_json
        """

    private static let analysisColumnsWithSeries = analysisColumnsWithoutSeries + """
        ,
        CASE WHEN length(analyses.windows) <= \(PackedWindows.maximumWindows * PackedWindows.stride) THEN analyses.windows ELSE x'' END AS windows,
        CASE WHEN length(analyses.beats_json) <= \(StoredJSON<BeatPositions>.maximumTextBytes) THEN analyses.beats_json END AS beats_json
        """

    /// The most characters of a worker's name, a reason or an error read back.
    static let maxShownTextCharacters = 4096
    /// The longest parameter set read (a worker declares its detectors in at most 64 KiB).
    static let maxParametersCharacters = 64 << 10

    static func songRecord(_ row: Row) throws -> SongRecord {
        let envelope: EnergyEnvelope?
        if let data = row["envelope"] as Data?, let hop = row["envelope_hop_s"] as Double? {
            envelope = PackedEnvelope.decode(data, hopS: hop)
        } else {
            envelope = nil
        }
        return SongRecord(
            id: try SongID.stored(row["sha256"]), fileName: row["file_name"], byteSize: row["byte_size"],
            format: row["format"], codec: row["codec"], sampleRate: row["sample_rate"], channels: row["channels"],
            durationS: row["duration_s"],
            tags: AudioTags(
                title: row["title"], artist: row["artist"], album: row["album"], genre: row["genre"], year: row["year"]
            ).bounded(),
            addedAt: row.storedDate("added_at"), envelope: envelope, beatGrid: StoredJSON<BeatGrid>.decode(row["beat_grid_json"]))
    }

    static func storedAnalysis(_ row: Row, song: SongID, windows: Bool) throws -> StoredAnalysis {
        let params = (try? JSONDecoder().decode(ParameterSet.self, from: Data((row["params_json"] as String).utf8)))
            ?? ParameterSet()
        let series = windows ? (PackedWindows.decode(row["windows"]) ?? []) : []
        let descriptor = DetectorDescriptor(
            name: row["detector"], version: row["detector_version"], summary: "", presets: [], specific: [])
        let output = DetectorOutput(
            bpm: row["bpm"], reason: row["reason"], confidence: row["confidence"],
            candidates: CandidatesJSON.decode(row["candidates_json"]), windows: series,
            beats: windows ? StoredJSON<BeatPositions>.decode(row["beats_json"]) : nil)
        let status = AnalysisStatus(rawValue: row["status"]) ?? .failed
        let failure: AnalysisFailure? = (row["error_code"] as String?).map {
            AnalysisFailure(code: ErrorCode(rawValue: $0), message: row["error_message"] ?? "")
        }
        let record = AnalysisRecord(
            analysis: TempoAnalysis(descriptor: descriptor, params: params, output: output, seconds: row["seconds"]),
            status: status, failure: failure, worker: row["worker"], analyzedAt: row.storedDate("analyzed_at"))
        return StoredAnalysis(song: song, record: record, paramsHash: row["params_hash"])
    }
}

/// How much a library holds.
public struct LibraryCounts: Sendable, Hashable, Codable {
    public var songs: Int
    public var analyses: Int
    public var references: Int
}
