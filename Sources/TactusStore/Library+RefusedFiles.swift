import Foundation
import GRDB
import TactusModel

/// Files below a library root that a scan refused for their content (table `refused_files`,
/// migration `v9`), so that the next scan lists them again without reading them: a collection's
/// cover images, playlists and notes are hashed and probed once, not on every scan.
///
/// A refusal matches while the file keeps the size, modification time and inode change time it
/// had (a change time no owner can set back: a song written over a refused file of the same size,
/// its modification time put back, is read again) and the readers are those that refused it
/// (``AudioReaders/revision``); a scan deletes the rows that
/// no longer match (``forgetRefusals(atRoot:paths:)``), and the file is read again. A file is
/// trusted to be refused again, and not read, once two scans in a row have refused it: a read
/// error met once (a network share's hiccup, read as a short file) does not hide a song.
extension Library {
    /// A file a scan refused, with what it was refused for.
    public struct RefusedFile: Sendable, Hashable {
        /// Where the file lies, with the size and modification time it had when refused.
        public var location: SongLocation
        /// The inode's change time when refused (nil for a refusal recorded before migration
        /// `v10`, which matches no file).
        public var ctimeNs: Int64?
        public var code: ErrorCode
        public var message: String
        /// The revision of the readers that refused it (``AudioReaders/revision``).
        public var readerVersion: String
        /// How many scans in a row refused it, at this size and time.
        public var refusals: Int

        public init(
            location: SongLocation, ctimeNs: Int64?, code: ErrorCode, message: String, readerVersion: String = AudioReaders.revision,
            refusals: Int = 1
        ) {
            self.location = location
            self.ctimeNs = ctimeNs
            self.code = code
            self.message = message
            self.readerVersion = readerVersion
            self.refusals = refusals
        }

        /// Whether the refusal is of a file of `size` bytes modified at `mtimeNs`, its inode
        /// changed at `ctimeNs`, by these readers.
        public func matches(size: Int, mtimeNs: Int64, ctimeNs: Int64) -> Bool {
            location.byteSize == size && location.mtimeNs == mtimeNs && self.ctimeNs == ctimeNs && readerVersion == AudioReaders.revision
        }

        /// Whether the file, of `size` bytes modified at `mtimeNs` and changed at `ctimeNs`, is
        /// refused again without being read: the refusal matches it, and two scans in a row have
        /// refused it.
        public func holds(size: Int, mtimeNs: Int64, ctimeNs: Int64) -> Bool {
            matches(size: size, mtimeNs: mtimeNs, ctimeNs: ctimeNs) && refusals >= 2
        }
    }

    /// Records that the files at the locations of `refused` were refused, in one transaction: a
    /// file refused before at the same size and times by the same readers counts one refusal
    /// more, any other starts again at one.
    public func recordRefusals(_ refused: [RefusedFile]) throws(StoreError) {
        guard !refused.isEmpty else { return }
        for file in refused { try Self.checkLocation(file.location) }
        let now = StoredDate.now
        try write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO refused_files
                        (root, path, byte_size, mtime_ns, ctime_ns, error_code, error_message, reader_version, refusals, refused_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
                    ON CONFLICT (root, path) DO UPDATE SET
                        refusals = CASE WHEN byte_size = excluded.byte_size AND mtime_ns = excluded.mtime_ns
                            AND ctime_ns IS excluded.ctime_ns AND reader_version = excluded.reader_version
                            THEN refusals + 1 ELSE 1 END,
                        byte_size = excluded.byte_size, mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns,
                        error_code = excluded.error_code,
                        error_message = excluded.error_message, reader_version = excluded.reader_version,
                        refused_at = excluded.refused_at
                    """)
            for file in refused {
                try insert.execute(arguments: [
                    file.location.root, file.location.path, file.location.byteSize, file.location.mtimeNs, file.ctimeNs,
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
            let below = Self.paths(below: prefix)
            let rows = try Row.fetchCursor(
                db, sql: "SELECT * FROM refused_files WHERE root = ?" + below.sql + " ORDER BY path", arguments: [root] + below.arguments)
            while let row = try rows.next() { try body(try Self.refusedFile(row)) }
        }
    }

    /// Forgets the refusals of the files at `paths` below `root`, in transactions of at most
    /// 1,000 rows.
    public func forgetRefusals(atRoot root: String, paths: [String]) throws(StoreError) {
        try writeInBatches(paths) { db, path in
            try db.cachedStatement(sql: "DELETE FROM refused_files WHERE root = ? AND path = ?").execute(arguments: [root, path])
        }
    }

    /// Forgets every refusal below `root` whose path is `prefix` or lies under it (a folder or
    /// file that is gone; every refusal of the root when `prefix` is empty).
    public func forgetRefusals(underRoot root: String, prefix: String) throws(StoreError) {
        let below = Self.paths(below: prefix)
        try write { db in
            try db.execute(sql: "DELETE FROM refused_files WHERE root = ?" + below.sql, arguments: [root] + below.arguments)
        }
    }

    private static func refusedFile(_ row: Row) throws -> RefusedFile {
        let code: String = row["error_code"]
        return RefusedFile(
            location: SongLocation(root: row["root"], path: row["path"], byteSize: row["byte_size"], mtimeNs: row["mtime_ns"]),
            ctimeNs: row["ctime_ns"], code: ErrorCode(rawValue: code), message: row["error_message"], readerVersion: row["reader_version"],
            refusals: row["refusals"])
    }
}
