import Foundation
import GRDB
import TactusModel

/// Files below a library root that a scan refused for their content (table `refused_files`,
/// migration `v9`), so that the next scan lists them again without reading them: a collection's
/// cover images, playlists and notes are hashed and probed once, not on every scan.
///
/// A refusal holds while the file keeps the size and modification time it had and Tactus's
/// version is the one whose readers refused it (``TactusVersion/current``); a scan deletes the
/// rows that no longer hold (``forgetRefusals(atRoot:paths:)``), and the file is read again.
extension Library {
    /// A file a scan refused, with what it was refused for.
    public struct RefusedFile: Sendable, Hashable {
        /// Where the file lies, with the size and modification time it had when refused.
        public var location: SongLocation
        public var code: ErrorCode
        public var message: String
        /// The Tactus version whose readers refused it.
        public var readerVersion: String

        public init(location: SongLocation, code: ErrorCode, message: String, readerVersion: String = TactusVersion.current) {
            self.location = location
            self.code = code
            self.message = message
            self.readerVersion = readerVersion
        }

        /// Whether the refusal still holds for a file of `size` bytes modified at `mtimeNs`,
        /// read by this version of Tactus.
        public func holds(size: Int, mtimeNs: Int64) -> Bool {
            location.byteSize == size && location.mtimeNs == mtimeNs && readerVersion == TactusVersion.current
        }
    }

    /// Records that the files at the locations of `refused` were refused, replacing what was
    /// recorded for their roots and paths, in one transaction.
    public func recordRefusals(_ refused: [RefusedFile]) throws(StoreError) {
        guard !refused.isEmpty else { return }
        for file in refused { try Self.checkLocation(file.location) }
        let now = StoredDate.now
        try write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO refused_files
                        (root, path, byte_size, mtime_ns, error_code, error_message, reader_version, refused_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for file in refused {
                try insert.execute(arguments: [
                    file.location.root, file.location.path, file.location.byteSize, file.location.mtimeNs,
                    file.code.rawValue, file.message, file.readerVersion, now,
                ])
            }
        }
    }

    /// The refusal recorded for the file at `path` below `root`, or nil.
    public func refusal(atRoot root: String, path: String) throws(StoreError) -> RefusedFile? {
        try readStatement { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM refused_files WHERE root = ? AND path = ?"), arguments: [root, path]
            ).map(Self.refusedFile)
        }
    }

    /// Calls `body` with each refusal recorded below `root` whose path is `prefix` or lies under
    /// it (every one of the root when `prefix` is empty), in the byte order of their paths'
    /// UTF-8, one row at a time.
    public func forEachRefusal(underRoot root: String, prefix: String = "", _ body: (RefusedFile) throws -> Void) throws(StoreError) {
        try read { db in
            let rows: RowCursor
            if prefix.isEmpty {
                rows = try Row.fetchCursor(db, sql: "SELECT * FROM refused_files WHERE root = ? ORDER BY path", arguments: [root])
            } else {
                // `path = prefix` or `path` starts with `prefix/` (a range on the key; `0` follows `/`).
                rows = try Row.fetchCursor(
                    db,
                    sql: "SELECT * FROM refused_files WHERE root = ? AND (path = ? OR (path >= ? AND path < ?)) ORDER BY path",
                    arguments: [root, prefix, prefix + "/", prefix + "0"])
            }
            while let row = try rows.next() { try body(try Self.refusedFile(row)) }
        }
    }

    /// Forgets the refusals of the files at `paths` below `root`, in transactions of at most
    /// 1,000 rows.
    public func forgetRefusals(atRoot root: String, paths: [String]) throws(StoreError) {
        for start in stride(from: 0, to: paths.count, by: 1000) {
            try write { db in
                for path in paths[start..<min(start + 1000, paths.count)] {
                    try db.cachedStatement(sql: "DELETE FROM refused_files WHERE root = ? AND path = ?").execute(arguments: [root, path])
                }
            }
        }
    }

    private static func refusedFile(_ row: Row) throws -> RefusedFile {
        let code: String = row["error_code"]
        return RefusedFile(
            location: SongLocation(root: row["root"], path: row["path"], byteSize: row["byte_size"], mtimeNs: row["mtime_ns"]),
            code: ErrorCode(rawValue: code), message: row["error_message"], readerVersion: row["reader_version"])
    }
}
