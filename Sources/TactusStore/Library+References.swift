import Foundation
import GRDB
import TactusModel

extension Library {
    /// Sets (or replaces) the reference tempo of a song in the library.
    public func setReference(_ bpm: Double, for song: SongID, source: String = "manual") throws(StoreError) {
        try Self.checkBPM(bpm, field: "bpm")
        try write { db in
            try Self.upsertReference(bpm, songKey: try Self.songKey(song, db), source: source, at: Date(), db)
        }
    }

    /// The reference tempo of a song, or nil when none was set.
    public func reference(for song: SongID) throws(StoreError) -> ReferenceTempo? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT r.bpm, r.source, r.set_at FROM reference_tempi r JOIN songs s ON s.id = r.song_id
                    WHERE s.sha256 = ?
                    """,
                arguments: [song]
            ).map { ReferenceTempo(song: song, bpm: $0[0], source: $0[1], setAt: $0[2]) }
        }
    }

    /// Imports reference tempi from a CSV file, all or nothing; returns how many were set.
    ///
    /// The first line is a header naming the columns: `bpm`, and either `song` (a SHA-256 or
    /// a unique prefix of at least 8 hex digits) or `file` (a path, relative to the CSV's
    /// folder unless absolute, whose bytes are hashed; or, when no such file exists, the
    /// file name of exactly one song of the library). Other columns are ignored; fields may
    /// be quoted as in RFC 4180; blank lines are skipped. The source recorded is
    /// `csv:NAME` with the CSV's file name.
    ///
    /// Any malformed line (a missing field, a BPM that is not a number in 1...1000, a song
    /// that is not in the library) rejects the whole file with
    /// ``StoreError/malformedCSV(file:line:reason:)`` naming the line; the database is then
    /// unchanged.
    @discardableResult
    public func importReferences(csvAt path: String) throws(StoreError) -> Int {
        let csv = try ReferenceCSV.read(path)
        return try write { db in
            for row in csv.rows {
                let key: Int64
                switch row.song {
                case .id(let prefix): key = try Self.songKey(prefix: prefix, file: csv.fileName, line: row.line, db)
                case .content(let file, let song):
                    guard let found = try Int64.fetchOne(db, sql: "SELECT id FROM songs WHERE sha256 = ?", arguments: [song]) else {
                        throw StoreError.malformedCSV(file: csv.fileName, line: row.line, reason: "the file \(file) is not in the library")
                    }
                    key = found
                case .file(let file): key = try Self.songKey(fileName: file, csv: csv.fileName, line: row.line, db)
                }
                try Self.upsertReference(row.bpm, songKey: key, source: csv.source, at: csv.readAt, db)
            }
            return csv.rows.count
        }
    }

    /// Sets the reference tempo of every song of `references`, all or nothing (a server's
    /// `truth-import`): an unknown song throws ``StoreError/unknownSong(_:)`` and leaves the
    /// library unchanged. Returns how many were set.
    @discardableResult
    public func setReferences(_ references: [(song: SongID, bpm: Double)], source: String) throws(StoreError) -> Int {
        for reference in references { try Self.checkBPM(reference.bpm, field: "bpm") }
        let now = Date()
        return try write { db in
            for reference in references {
                try Self.upsertReference(reference.bpm, songKey: try Self.songKey(reference.song, db), source: source, at: now, db)
            }
            return references.count
        }
    }

    static func upsertReference(_ bpm: Double, songKey: Int64, source: String, at date: Date, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO reference_tempi (song_id, bpm, source, set_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (song_id) DO UPDATE SET bpm = excluded.bpm, source = excluded.source, set_at = excluded.set_at
                """
        ).execute(arguments: [songKey, bpm, source, StoredDate.text(date)])
    }

    private static func songKey(prefix: String, file: String, line: Int, _ db: Database) throws -> Int64 {
        let keys = try Int64.fetchAll(
            db, sql: "SELECT id FROM songs WHERE sha256 >= ? AND sha256 < ? LIMIT 2", arguments: [prefix, prefix + "g"])
        switch keys.count {
        case 1: return keys[0]
        case 0: throw StoreError.malformedCSV(file: file, line: line, reason: "no song in the library matches '\(prefix)'")
        default:
            throw StoreError.malformedCSV(file: file, line: line, reason: "'\(prefix)' is the prefix of several songs")
        }
    }

    private static func songKey(fileName: String, csv: String, line: Int, _ db: Database) throws -> Int64 {
        let name = URL(fileURLWithPath: fileName).lastPathComponent
        let keys = try Int64.fetchAll(db, sql: "SELECT id FROM songs WHERE file_name = ? LIMIT 2", arguments: [name])
        switch keys.count {
        case 1: return keys[0]
        case 0:
            throw StoreError.malformedCSV(
                file: csv, line: line, reason: "'\(fileName)' is neither a file nor the file name of a song in the library")
        default:
            throw StoreError.malformedCSV(
                file: csv, line: line, reason: "several songs of the library have the file name '\(name)'; name it by song")
        }
    }
}

/// The rows of a reference-tempo CSV file, checked for syntax and range before any song is
/// looked up.
/// A CSV file of reference tempi, read (``read(_:)``) as ``Library/importReferences(csvAt:)``
/// describes it: its rows, each naming its song by id or by file, the files that exist
/// already hashed.
public struct ReferenceCSV: Sendable {
    /// How a row names its song.
    public enum SongName: Equatable, Sendable {
        /// A SHA-256 or a prefix of one, lowercased.
        case id(String)
        /// A file the CSV names that exists, and the SHA-256 of its bytes.
        case content(file: String, song: SongID)
        /// The file name of a song of the library (no such file exists beside the CSV).
        case file(String)
    }

    /// One line of the CSV: its number (from 1), its song and tempo.
    public struct Row: Equatable, Sendable {
        public var line: Int
        public var song: SongName
        public var bpm: Double
    }

    /// The CSV's file name, which errors name.
    public var fileName: String
    /// The rows, in the file's order.
    public var rows: [Row]
    /// When the file was read: the time its tempi are set at.
    public var readAt: Date

    /// The source recorded with the tempi: `csv:NAME`.
    public var source: String { "csv:\(fileName)" }

    /// Reads the CSV at `path`, hashing the files its `file` column names that exist (before
    /// any transaction: reading audio files is slow). Throws
    /// ``StoreError/malformedCSV(file:line:reason:)`` naming the line of any malformed row, or
    /// of a file that cannot be hashed.
    public static func read(_ path: String) throws(StoreError) -> ReferenceCSV {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .unreadableFile(path: path, reason: "not a readable UTF-8 text file")
        }
        let fileName = URL(fileURLWithPath: path).lastPathComponent
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var rows = try parse(text, fileName: fileName)
        for index in rows.indices {
            guard case .file(let file) = rows[index].song else { continue }
            let url = file.hasPrefix("/") ? URL(fileURLWithPath: file) : folder.appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            do {
                rows[index].song = .content(file: file, song: try SongID.ofFile(atPath: url.path))
            } catch {
                throw .malformedCSV(file: fileName, line: rows[index].line, reason: error.description)
            }
        }
        return ReferenceCSV(fileName: fileName, rows: rows, readAt: Date())
    }

    static func parse(_ text: String, fileName: String) throws(StoreError) -> [Row] {
        // "\r\n" is one Character in Swift: normalise line ends before splitting.
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        guard let headerIndex = lines.firstIndex(where: { !$0.allSatisfy(\.isWhitespace) }) else {
            throw .malformedCSV(file: fileName, line: 1, reason: "empty file; expected a header with bpm and song or file")
        }
        let header = try fields(of: lines[headerIndex], file: fileName, line: headerIndex + 1)
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let bpmColumn = header.firstIndex(of: "bpm") else {
            throw .malformedCSV(file: fileName, line: headerIndex + 1, reason: "the header has no bpm column")
        }
        let songColumn = header.firstIndex(of: "song")
        let fileColumn = header.firstIndex(of: "file")
        guard (songColumn == nil) != (fileColumn == nil) else {
            throw .malformedCSV(
                file: fileName, line: headerIndex + 1, reason: "the header needs exactly one of the columns song and file")
        }
        var rows = [Row]()
        for index in lines.indices where index > headerIndex && !lines[index].allSatisfy(\.isWhitespace) {
            let line = index + 1
            let values = try fields(of: lines[index], file: fileName, line: line)
            guard values.count == header.count else {
                throw .malformedCSV(
                    file: fileName, line: line, reason: "\(values.count) fields where the header has \(header.count)")
            }
            let bpmText = values[bpmColumn].trimmingCharacters(in: .whitespaces)
            guard let bpm = Double(bpmText), bpm.isFinite, TempoQuery.acceptedBPM.contains(bpm) else {
                throw .malformedCSV(
                    file: fileName, line: line, reason: "bpm '\(bpmText)' is not a tempo in 1...1000")
            }
            let song: SongName
            if let songColumn {
                let name = values[songColumn].trimmingCharacters(in: .whitespaces).lowercased()
                guard name.count >= 8, name.count <= 64, SongID.isHexPrefix(name) else {
                    throw .malformedCSV(
                        file: fileName, line: line,
                        reason: "song '\(name)' is not a SHA-256 or a prefix of at least 8 hex digits")
                }
                song = .id(name)
            } else {
                let file = values[fileColumn!].trimmingCharacters(in: .whitespaces)
                guard !file.isEmpty else { throw .malformedCSV(file: fileName, line: line, reason: "empty file name") }
                song = .file(file)
            }
            rows.append(Row(line: line, song: song, bpm: bpm))
        }
        return rows
    }

    /// Splits one line into fields: comma-separated, fields optionally in double quotes
    /// with `""` for a quote inside.
    static func fields(of line: Substring, file: String, line number: Int) throws(StoreError) -> [String] {
        var fields = [String]()
        var current = ""
        var quoted = false
        var afterQuote = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            if quoted {
                if character == "\"" {
                    quoted = false
                    afterQuote = true
                } else {
                    current.append(character)
                }
            } else if character == "," {
                fields.append(current)
                current = ""
                afterQuote = false
            } else if character == "\"" {
                if afterQuote {
                    current.append("\"")  // "" inside a quoted field
                    quoted = true
                } else if current.allSatisfy(\.isWhitespace) {
                    current = ""
                    quoted = true
                } else {
                    throw .malformedCSV(file: file, line: number, reason: "a quote inside an unquoted field")
                }
            } else if afterQuote, !character.isWhitespace {
                throw .malformedCSV(file: file, line: number, reason: "text after a closing quote")
            } else {
                current.append(character)
            }
        }
        if quoted { throw .malformedCSV(file: file, line: number, reason: "an unterminated quote") }
        fields.append(current)
        return fields
    }
}
