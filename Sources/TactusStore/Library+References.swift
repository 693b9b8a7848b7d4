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
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .unreadableFile(path: path, reason: "not a readable UTF-8 text file")
        }
        let fileName = URL(fileURLWithPath: path).lastPathComponent
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let rows = try ReferenceCSV.parse(text, fileName: fileName)

        // Hash the files named by the CSV before the transaction: reading audio files is slow.
        var hashed = [Int: SongID]()
        for row in rows {
            guard case .file(let file) = row.song else { continue }
            let url = file.hasPrefix("/") ? URL(fileURLWithPath: file) : folder.appendingPathComponent(file)
            if FileManager.default.fileExists(atPath: url.path) {
                do {
                    hashed[row.line] = try SongID.ofFile(atPath: url.path)
                } catch {
                    throw .malformedCSV(file: fileName, line: row.line, reason: error.description)
                }
            }
        }
        let now = Date()
        return try write { db in
            for row in rows {
                let key: Int64
                switch row.song {
                case .id(let prefix):
                    key = try Self.songKey(prefix: prefix, file: fileName, line: row.line, db)
                case .file(let file):
                    if let id = hashed[row.line] {
                        guard let found = try Int64.fetchOne(
                            db, sql: "SELECT id FROM songs WHERE sha256 = ?", arguments: [id])
                        else {
                            throw StoreError.malformedCSV(
                                file: fileName, line: row.line, reason: "the file \(file) is not in the library")
                        }
                        key = found
                    } else {
                        key = try Self.songKey(fileName: file, csv: fileName, line: row.line, db)
                    }
                }
                try Self.upsertReference(row.bpm, songKey: key, source: "csv:\(fileName)", at: now, db)
            }
            return rows.count
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
enum ReferenceCSV {
    enum SongName: Equatable {
        /// A SHA-256 or a prefix of one, lowercased.
        case id(String)
        case file(String)
    }

    struct Row: Equatable {
        var line: Int
        var song: SongName
        var bpm: Double
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
