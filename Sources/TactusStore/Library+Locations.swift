import Foundation
import GRDB
import TactusModel

extension Library {
    /// Where `song` lies under the library roots (present and missing files), by root and path.
    public func locations(of song: SongID) throws(StoreError) -> [SongLocation] {
        try readStatement { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT l.* FROM song_locations l JOIN songs s ON s.id = l.song_id
                        WHERE s.sha256 = ? ORDER BY l.root, l.path
                        """),
                arguments: [song]
            ).map(Self.location)
        }
    }

    /// The absolute paths of the files of `song` that are present (missing ones left out).
    public func paths(of song: SongID) throws(StoreError) -> [String] {
        try locations(of: song).filter { !$0.missing }.map(\.absolutePath)
    }

    /// The song stored at `path` below `root`, with what was last seen of the file, or nil.
    public func song(atRoot root: String, path: String) throws(StoreError) -> (song: SongID, location: SongLocation)? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT l.*, s.sha256 FROM song_locations l JOIN songs s ON s.id = l.song_id WHERE l.root = ? AND l.path = ?",
                arguments: [root, path]
            ).map { (try SongID.stored($0["sha256"]), Self.location($0)) }
        }
    }

    /// Every location below `root` whose path is `prefix` or lies under it (every location of
    /// the root when `prefix` is empty), with its song: what a scan compares the disk with.
    public func locations(underRoot root: String, prefix: String = "") throws(StoreError) -> [(song: SongID, location: SongLocation)] {
        try read { db in
            let below = Self.paths(below: prefix, column: "l.path")
            let rows = try Row.fetchAll(
                db, sql: "SELECT l.*, s.sha256 FROM song_locations l JOIN songs s ON s.id = l.song_id WHERE l.root = ?" + below.sql,
                arguments: [root] + below.arguments)
            return try rows.map { (try SongID.stored($0["sha256"]), Self.location($0)) }
        }
    }

    /// The condition, to follow another with `AND`, that `column` (a path below a root) is
    /// `prefix` or starts with `prefix/` (a range on the index of root and path; `0` follows
    /// `/`), and its arguments; none when `prefix` is empty (every path of the root).
    static func paths(below prefix: String, column: String = "path") -> (sql: String, arguments: StatementArguments) {
        guard !prefix.isEmpty else { return ("", []) }
        return (" AND (\(column) = ? OR (\(column) >= ? AND \(column) < ?))", [prefix, prefix + "/", prefix + "0"])
    }

    /// The library roots the locations are recorded against, in order: what `tactus scan --db`
    /// scans when it is given no root.
    public func locationRoots() throws(StoreError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT DISTINCT root FROM song_locations ORDER BY root") }
    }

    /// Records that `song` lies at `location` (present, seen now), replacing what was stored at
    /// that root and path (another song, when the file changed), and clears the song's `missing`.
    public func recordLocation(_ location: SongLocation, of song: SongID) throws(StoreError) {
        try Self.checkLocation(location)
        try write { db in try Self.record(location, songKey: try Self.songKey(song, db), db) }
    }

    /// Records `location` for the song `key`. A song whose file at that place was replaced by
    /// other bytes is left with no present file: it leaves query results (it is `missing`).
    static func record(_ location: SongLocation, songKey key: Int64, _ db: Database) throws {
        let previous = try Int64.fetchOne(
            db, sql: "SELECT song_id FROM song_locations WHERE root = ? AND path = ?", arguments: [location.root, location.path])
        try db.execute(
            sql: """
                INSERT INTO song_locations (song_id, root, path, byte_size, mtime_ns, ctime_ns, seen_at, missing_since)
                VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
                ON CONFLICT (root, path) DO UPDATE SET
                    song_id = excluded.song_id, byte_size = excluded.byte_size, mtime_ns = excluded.mtime_ns,
                    ctime_ns = excluded.ctime_ns, seen_at = excluded.seen_at, missing_since = NULL
                """,
            arguments: [key, location.root, location.path, location.byteSize, location.mtimeNs, location.ctimeNs, StoredDate.now])
        try refreshMissing(songKey: key, db)
        if let previous, previous != key {
            try db.execute(
                sql: """
                    UPDATE songs SET missing = NOT EXISTS (
                        SELECT 1 FROM song_locations WHERE song_id = :key AND missing_since IS NULL)
                    WHERE id = :key
                    """,
                arguments: ["key": previous])
        }
    }

    /// Records the inode change times of files below `root` whose locations have none (recorded
    /// before migration `v11`) and that a scan found unchanged, `(path, ctimeNs)` each, in
    /// transactions of at most 1,000 rows; a location that has one keeps it.
    public func recordChangeTimes(atRoot root: String, _ times: [(path: String, ctimeNs: Int64)]) throws(StoreError) {
        try writeInBatches(times) { db, time in
            try db.cachedStatement(sql: "UPDATE song_locations SET ctime_ns = ? WHERE root = ? AND path = ? AND ctime_ns IS NULL")
                .execute(arguments: [time.ctimeNs, root, time.path])
        }
    }

    /// Makes the next scan hash every present file of `song` again, whatever its size and
    /// modification time (they are forgotten): for a song whose file turned out not to hold
    /// it (a job failed `song-changed`), which may have changed without its size or time
    /// showing it.
    public func rescanLocations(of song: SongID) throws(StoreError) {
        try write { db in try Self.distrustLocations(songKey: try Self.songKey(song, db), db) }
    }

    /// Gives the present files of the song with row id `songKey` a modification time no file has.
    static func distrustLocations(songKey: Int64, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE song_locations SET mtime_ns = ? WHERE song_id = ? AND missing_since IS NULL",
            arguments: [unknownModificationTime, songKey])
    }

    /// The modification time stored for a file whose time is to be distrusted: no file has it.
    static let unknownModificationTime = Int64.min

    /// Marks the file at `path` below `root` missing (a scan found it gone); the song leaves
    /// query results when none of its files is left. Returns false when nothing was stored there.
    @discardableResult
    public func markMissing(root: String, path: String) throws(StoreError) -> Bool {
        try write { db in
            guard let key = try Int64.fetchOne(
                db, sql: "SELECT song_id FROM song_locations WHERE root = ? AND path = ?", arguments: [root, path])
            else { return false }
            try db.execute(
                sql: "UPDATE song_locations SET missing_since = coalesce(missing_since, ?) WHERE root = ? AND path = ?",
                arguments: [StoredDate.now, root, path])
            try Self.refreshMissing(songKey: key, db)
            return true
        }
    }

    /// Forgets the location at `path` below `root` (the file moved: its song has another one).
    /// A song whose file name was that file's takes the name of a file it still has, so a
    /// renamed song is shown (and named) by its new name.
    public func removeLocation(root: String, path: String) throws(StoreError) {
        try write { db in
            guard let key = try Int64.fetchOne(
                db, sql: "SELECT song_id FROM song_locations WHERE root = ? AND path = ?", arguments: [root, path])
            else { return }
            try db.execute(sql: "DELETE FROM song_locations WHERE root = ? AND path = ?", arguments: [root, path])
            try Self.refreshMissing(songKey: key, db)
            let present = try String.fetchOne(
                db, sql: "SELECT path FROM song_locations WHERE song_id = ? AND missing_since IS NULL ORDER BY path LIMIT 1",
                arguments: [key])
            if let present {
                try db.execute(
                    sql: "UPDATE songs SET file_name = ? WHERE id = ? AND file_name = ?",
                    arguments: [(present as NSString).lastPathComponent, key, (path as NSString).lastPathComponent])
            }
        }
    }

    /// `songs.missing` of one song: 1 when it has locations and all are missing.
    static func refreshMissing(songKey: Int64, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE songs SET missing = (
                    EXISTS (SELECT 1 FROM song_locations WHERE song_id = :key)
                    AND NOT EXISTS (SELECT 1 FROM song_locations WHERE song_id = :key AND missing_since IS NULL))
                WHERE id = :key
                """,
            arguments: ["key": songKey])
    }

    static func location(_ row: Row) -> SongLocation {
        SongLocation(
            root: row["root"], path: row["path"], byteSize: row["byte_size"], mtimeNs: row["mtime_ns"], ctimeNs: row["ctime_ns"],
            missing: (row["missing_since"] as DatabaseValue).isNull == false)
    }

    static func checkLocation(_ location: SongLocation) throws(StoreError) {
        guard location.root.hasPrefix("/") else {
            throw .invalidValue(field: "root", value: location.root, accepted: "an absolute directory")
        }
        let names = location.path.split(separator: "/", omittingEmptySubsequences: false)
        guard !location.path.isEmpty, !location.path.hasPrefix("/"), names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw .invalidValue(field: "path", value: location.path, accepted: "a relative path without empty, `.` or `..` names")
        }
        guard location.byteSize >= 0 else {
            throw .invalidValue(field: "byte_size", value: "\(location.byteSize)", accepted: "a size >= 0")
        }
    }
}
