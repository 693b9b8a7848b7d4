import Foundation
import GRDB
import TactusDetector
import TactusModel

/// A song together with its analyses, for ``Library/record(_:)``.
public struct SongAnalyses: Sendable, Hashable {
    public var song: SongRecord
    public var analyses: [AnalysisRecord]

    public init(song: SongRecord, analyses: [AnalysisRecord]) {
        self.song = song
        self.analyses = analyses
    }
}

extension Library {
    /// Records a song and its analyses in one transaction, then recomputes the song's
    /// consensus; returns it.
    ///
    /// A song already in the library keeps its `added_at` and has its other fields updated
    /// (its envelope too, unless `song.envelope` is nil). An analysis with the same
    /// detector, version and parameters as a stored one replaces it.
    @discardableResult
    public func record(_ song: SongRecord, analyses: [AnalysisRecord]) throws(StoreError) -> ConsensusTempo {
        try record([SongAnalyses(song: song, analyses: analyses)])[0]
    }

    /// Records many songs with their analyses in one transaction (all or nothing); returns
    /// each song's new consensus, in order. Much faster than one call per song.
    @discardableResult
    public func record(_ batch: [SongAnalyses]) throws(StoreError) -> [ConsensusTempo] {
        for entry in batch {
            try entry.song.validate()
            for analysis in entry.analyses { try analysis.validate() }
        }
        return try write { db in
            var consensus = [ConsensusTempo]()
            consensus.reserveCapacity(batch.count)
            var params = ParameterText()
            for entry in batch {
                let key = try Self.upsert(entry.song, db)
                for analysis in entry.analyses { try Self.upsert(analysis, songKey: key, params: &params, db) }
                consensus.append(try Self.refreshConsensus(songKey: key, advisory: advisoryDetectors, db))
            }
            return consensus
        }
    }

    /// Stores one analysis of a song already in the library (inserting it, or replacing
    /// the one with the same detector, version and parameters) and recomputes the song's
    /// consensus, in one transaction; returns the new consensus. This is how the coordinator
    /// records a worker's result.
    @discardableResult
    public func store(_ analysis: AnalysisRecord, for song: SongID) throws(StoreError) -> ConsensusTempo {
        try store([(song, analysis)])[song]!
    }

    /// Stores many analyses in one transaction (all or nothing), recomputing each affected
    /// song's consensus once; returns the new consensus of each song. Every song must be in
    /// the library.
    @discardableResult
    public func store(_ batch: [(song: SongID, analysis: AnalysisRecord)]) throws(StoreError) -> [SongID: ConsensusTempo] {
        for entry in batch { try entry.analysis.validate() }
        return try write { db in
            var keys = [SongID: Int64]()
            var order = [SongID]()
            var params = ParameterText()
            for (song, analysis) in batch {
                let key: Int64
                if let known = keys[song] {
                    key = known
                } else {
                    key = try Self.songKey(song, db)
                    keys[song] = key
                    order.append(song)
                }
                try Self.upsert(analysis, songKey: key, params: &params, db)
            }
            var consensus = [SongID: ConsensusTempo]()
            for song in order { consensus[song] = try Self.refreshConsensus(songKey: keys[song]!, advisory: advisoryDetectors, db) }
            return consensus
        }
    }

    // MARK: - Statements

    /// The integer key of a song, or `unknownSong`.
    static func songKey(_ song: SongID, _ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: "SELECT id FROM songs WHERE sha256 = ?")
        guard let key = try Int64.fetchOne(statement, arguments: [song]) else {
            throw StoreError.unknownSong(song.hex)
        }
        return key
    }

    static func upsert(_ song: SongRecord, _ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO songs (sha256, file_name, byte_size, format, codec, sample_rate, channels, duration_s,
                                   title, artist, album, genre, year, added_at, envelope, envelope_hop_s, beat_grid_json)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (sha256) DO UPDATE SET
                    file_name = excluded.file_name, byte_size = excluded.byte_size, format = excluded.format,
                    codec = excluded.codec, sample_rate = excluded.sample_rate, channels = excluded.channels,
                    duration_s = excluded.duration_s, title = excluded.title, artist = excluded.artist,
                    album = excluded.album, genre = excluded.genre, year = excluded.year,
                    envelope = coalesce(excluded.envelope, songs.envelope),
                    envelope_hop_s = coalesce(excluded.envelope_hop_s, songs.envelope_hop_s),
                    beat_grid_json = coalesce(excluded.beat_grid_json, songs.beat_grid_json)
                RETURNING id
                """)
        let envelope = song.envelope.flatMap { PackedEnvelope.fits($0, durationS: song.durationS) ? $0 : nil }
        // The tags come from a file anyone may have written, through a probe that may not bound them.
        let tags = song.tags.bounded()
        let arguments: StatementArguments = [
            song.id, song.fileName, song.byteSize, song.format, song.codec, song.sampleRate, song.channels,
            song.durationS, tags.title, tags.artist, tags.album, tags.genre, tags.year,
            StoredDate.text(song.addedAt), envelope.map(PackedEnvelope.encode), envelope?.hopS, StoredJSON.encode(song.beatGrid),
        ]
        return try Int64.fetchOne(statement, arguments: arguments)!
    }

    /// The canonical JSON of parameter sets and its hash, computed once per set in a batch
    /// (a batch usually holds a handful of distinct sets).
    struct ParameterText {
        private var known = [ParameterSet: (json: String, hash: String)]()

        mutating func callAsFunction(_ params: ParameterSet) -> (json: String, hash: String) {
            if let text = known[params] { return text }
            let json = params.canonicalJSON
            let text = (json, AnalysisRecord.hash(canonicalJSON: json))
            known[params] = text
            return text
        }
    }

    static func upsert(_ record: AnalysisRecord, songKey: Int64, params: inout ParameterText, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO analyses (song_id, detector, detector_version, params_json, params_hash, status, bpm,
                                      confidence, candidates_json, windows, seconds, worker, analyzed_at, reason,
                                      error_code, error_message, beats_json)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (song_id, detector, detector_version, params_hash) DO UPDATE SET
                    params_json = excluded.params_json, status = excluded.status, bpm = excluded.bpm,
                    confidence = excluded.confidence, candidates_json = excluded.candidates_json,
                    windows = excluded.windows, seconds = excluded.seconds, worker = excluded.worker,
                    analyzed_at = excluded.analyzed_at, reason = excluded.reason, error_code = excluded.error_code,
                    error_message = excluded.error_message, beats_json = excluded.beats_json
                """)
        let a = record.analysis
        let (paramsJSON, paramsHash) = params(a.params)
        let arguments: StatementArguments = [
            songKey, a.detector, a.version, paramsJSON, paramsHash,
            record.status.rawValue, a.bpm, a.confidence, CandidatesJSON.encode(a.candidates),
            PackedWindows.encode(a.windows), a.seconds, record.worker, StoredDate.text(record.analyzedAt), a.reason,
            record.failure?.code.rawValue, record.failure?.message, StoredJSON.encode(a.beats),
        ]
        try statement.execute(arguments: arguments)
    }

    /// Recomputes a song's consensus from its stored analyses with
    /// ``Consensus/of(_:tolerance:advisory:)``: the `advisory` detectors' analyses do not vote.
    ///
    /// Each detector votes once, with its current analysis: the `default` preset's (or any
    /// preset's when it has no default analysis), the most recent one first; an older version
    /// or another preset of the same detector does not vote again. A detector whose current
    /// analysis found no tempo or failed does not vote.
    static func refreshConsensus(songKey: Int64, advisory: Set<String>, _ db: Database) throws -> ConsensusTempo {
        let select = try db.cachedStatement(
            sql: """
                SELECT detector, detector_version, bpm, confidence, candidates_json, status, windows FROM analyses
                WHERE song_id = ?
                ORDER BY detector,
                         coalesce(json_extract(params_json, '$.preset'), 'default') = 'default' DESC,
                         analyzed_at DESC, id DESC
                """)
        var analyses = [TempoAnalysis]()
        var voted = Set<String>()
        let rows = try Row.fetchCursor(select, arguments: [songKey])
        while let row = try rows.next() {
            guard voted.insert(row[0]).inserted, row[5] as String == AnalysisStatus.done.rawValue else { continue }
            let descriptor = DetectorDescriptor(
                name: row[0], version: row[1], summary: "", presets: [], specific: [])
            let output = DetectorOutput(
                bpm: row[2], confidence: row[3], candidates: CandidatesJSON.decode(row[4]),
                windows: (row[6] as Data?).flatMap(PackedWindows.decode) ?? [])
            analyses.append(TempoAnalysis(descriptor: descriptor, params: ParameterSet(), output: output, seconds: 0))
        }
        let consensus = Consensus.of(analyses, advisory: advisory)
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO consensus (song_id, bpm, detectors, detector_count, confidence, tempo_map_json, tempo_stable)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (song_id) DO UPDATE SET
                    bpm = excluded.bpm, detectors = excluded.detectors, detector_count = excluded.detector_count,
                    confidence = excluded.confidence, tempo_map_json = excluded.tempo_map_json, tempo_stable = excluded.tempo_stable
                """)
        try upsert.execute(arguments: [
            songKey, consensus.bpm, NamesJSON.encode(consensus.detectors), consensus.detectors.count, consensus.confidence,
            StoredJSON.encode(consensus.tempoMap), consensus.tempoMap?.stable,
        ])
        return consensus
    }
}

/// A value kept as JSON text in a column (nil: none): a consensus' tempo map
/// (`consensus.tempo_map_json`), an analysis' beat positions (`analyses.beats_json`). Text that
/// is no such value reads as none: a damaged row is a song without it, never a failed read.
/// Text longer than ``maximumTextBytes`` is not decoded (it is no such value either).
enum StoredJSON<Value: Codable> {
    /// The longest text read: the most beats and downbeats an analysis may carry
    /// (``AnalysisRecord/maximumBeats`` each) at up to 32 bytes a time.
    static var maximumTextBytes: Int { 2 * AnalysisRecord.maximumBeats * 32 }

    static func encode(_ value: Value?) -> String? {
        guard let value else { return nil }
        return (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }

    static func decode(_ text: String?) -> Value? {
        guard let text, text.utf8.count <= maximumTextBytes else { return nil }
        return try? JSONDecoder().decode(Value.self, from: Data(text.utf8))
    }
}

/// `analyses.candidates_json`: a JSON array of `{"bpm": number, "strength": number}`,
/// strongest first.
///
/// Candidates are written and read on every insert (the consensus needs them), so the
/// store writes this fixed form itself; reading accepts any JSON of that shape.
///
/// At most ``maximumCandidates`` are kept, the strongest; text longer than
/// ``maximumTextBytes`` (a library file edited by hand) reads as no candidates.
enum CandidatesJSON {
    /// The most candidates an analysis keeps (the built-in detectors give at most five).
    static let maximumCandidates = 32
    /// The longest text read: 128 bytes a candidate, more than the longest one written (72).
    static let maximumTextBytes = maximumCandidates * 128

    /// Numbers are validated finite, and Swift's shortest round-trip form of a finite
    /// Double (`120.0`, `1e-05`) is valid JSON.
    static func encode(_ candidates: [TempoCandidate]) -> String {
        var text = "["
        for (index, candidate) in candidates.prefix(maximumCandidates).enumerated() {
            if index > 0 { text += "," }
            text += "{\"bpm\":\(candidate.bpm),\"strength\":\(candidate.strength)}"
        }
        return text + "]"
    }

    static func decode(_ text: String) -> [TempoCandidate] {
        guard text.utf8.count <= maximumTextBytes else { return [] }
        let candidates = decodeWritten(text) ?? (try? JSONDecoder().decode([TempoCandidate].self, from: Data(text.utf8))) ?? []
        return Array(candidates.prefix(maximumCandidates))
    }

    /// Reads exactly the form ``encode(_:)`` writes; nil for anything else.
    private static func decodeWritten(_ text: String) -> [TempoCandidate]? {
        guard text.hasPrefix("["), text.hasSuffix("]") else { return nil }
        let body = text.dropFirst().dropLast()
        if body.isEmpty { return [] }
        var candidates = [TempoCandidate]()
        for object in body.split(separator: "}", omittingEmptySubsequences: true) {
            var item = object
            if item.hasPrefix(",") { item = item.dropFirst() }
            guard item.hasPrefix("{\"bpm\":") else { return nil }
            let fields = item.dropFirst(7).split(separator: ",", maxSplits: 1)
            guard fields.count == 2, fields[1].hasPrefix("\"strength\":"),
                let bpm = Double(fields[0]), let strength = Double(fields[1].dropFirst(11))
            else { return nil }
            candidates.append(TempoCandidate(bpm: bpm, strength: strength))
        }
        return candidates
    }
}

/// `consensus.detectors`: a JSON array of detector names.
enum NamesJSON {
    static func encode(_ names: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(names)) ?? Data("[]".utf8), as: UTF8.self)
    }

    static func decode(_ text: String) -> [String] {
        (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }
}
