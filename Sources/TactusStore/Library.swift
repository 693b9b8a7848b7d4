import Foundation
import GRDB
import TactusDetector
import TactusModel

/// A Tactus library: one SQLite file holding songs, their analyses by every detector, the
/// consensus tempo of each song and the reference tempi people assert.
///
/// Open or create one with ``init(path:options:)``:
///
/// ```swift
/// let library = try Library(path: "tactus-data/library.sqlite")
/// try library.record(song, analyses: [AnalysisRecord(analysis, worker: "w1")])
/// let fast = try library.query(TempoQuery(range: 170...180, octave: true, limit: 20))
/// ```
///
/// The file is in WAL mode with foreign keys on and a busy timeout: one process writes (the
/// coordinator, or a `tactus` command working offline) while any number of readers query it
/// without blocking. Every write is one transaction, so a crash at any moment (even
/// `kill -9`) leaves the file consistent, and a write that returned is not lost. Invalid
/// input is refused with a ``StoreError`` before anything is written.
///
/// The file is marked as a Tactus library (`PRAGMA application_id`, ``applicationID``). A
/// non-empty SQLite file that is not one (another program's database) is refused before
/// anything is written to it; a Tactus library made before the mark (its `grdb_migrations`
/// holds Tactus's first migration) is recognised and marked.
///
/// A `Library` is safe to use from several threads: reads run concurrently on a pool of
/// reader connections, writes are serialised on the writer connection.
public final class Library: Sendable {
    /// How a library file is opened.
    public enum Mode: Sendable, Hashable {
        /// Create the file if missing, bring its schema up to date, read and write.
        case create
        /// The file must exist; bring its schema up to date, read and write.
        case existing
        /// The file must exist with an up-to-date schema; reads only (writes fail).
        case readOnly
    }

    /// What a write that returned survives.
    public enum Durability: Sendable, Hashable {
        /// A crash of the process (SQLite `synchronous = NORMAL` in WAL mode): the fastest.
        /// A power loss may lose the last transactions, never the file's consistency.
        case processCrash
        /// A power loss or operating-system crash too (`synchronous = FULL`): every commit
        /// waits for the disk.
        case powerLoss
    }

    /// How to open a library.
    public struct Options: Sendable, Hashable {
        public var mode: Mode
        public var durability: Durability
        /// How long a connection waits for another process's lock before failing, in seconds.
        public var busyTimeout: Double
        /// Whether a commit that grows the write-ahead log past 1000 pages also copies it into
        /// the database file (SQLite's automatic checkpoint, with its fsyncs, in the writer's
        /// thread). A program whose writes must stay quick turns it off and calls
        /// ``Library/checkpointInBackground()`` from another thread instead.
        public var automaticCheckpoints: Bool
        /// The advisory detectors (``TactusDetector/DetectorDescriptor/advisory``, the registry's
        /// `advisoryNames`): their stored analyses do not vote in the songs' consensus.
        public var advisoryDetectors: Set<String>
        /// Whether this process must be the library's only writer while it is open (the
        /// coordinator, the commands given `--db` that write): opening fails with
        /// ``TactusModel/StoreError/inUse(path:)`` while another such writer has it open. Not
        /// for read-only opening.
        public var exclusiveWriter: Bool

        public init(
            mode: Mode = .create, durability: Durability = .processCrash, busyTimeout: Double = 10, automaticCheckpoints: Bool = true,
            advisoryDetectors: Set<String> = [], exclusiveWriter: Bool = false
        ) {
            self.mode = mode
            self.durability = durability
            self.busyTimeout = busyTimeout
            self.automaticCheckpoints = automaticCheckpoints
            self.advisoryDetectors = advisoryDetectors
            self.exclusiveWriter = exclusiveWriter
        }
    }

    /// The library file.
    public let path: String
    /// How long a statement waits for another connection's lock, in seconds.
    public let busyTimeout: Double
    /// The detectors whose analyses do not vote in the consensus (``Options/advisoryDetectors``).
    public let advisoryDetectors: Set<String>
    let pool: DatabasePool
    /// The connection of ``checkpointInBackground()``, apart from the pool's writer.
    private let checkpointer: DatabaseQueue?
    /// Held while the library is open, with ``Options/exclusiveWriter``, or until
    /// ``endWriting()``.
    private let writerLock: WriterLock?

    /// Gives up the writer's claim (``Options/exclusiveWriter``) now rather than when the last
    /// reference to the library goes: for a writer that is done (a coordinator whose loop has
    /// returned), while threads that are ending may still hold the library for a moment, so
    /// that a server started again at once on the same data directory is not refused. The
    /// library must not be written afterwards.
    public func endWriting() {
        writerLock?.release()
    }

    /// Opens the library at `path`, creating it and migrating its schema as `options` allow.
    public init(path: String, options: Options = Options()) throws(StoreError) {
        self.path = path
        self.busyTimeout = options.busyTimeout
        self.advisoryDetectors = options.advisoryDetectors
        if options.mode != .create, !FileManager.default.fileExists(atPath: path) {
            throw .cannotOpen(path: path, reason: "no such file")
        }
        try Self.refuseOtherThanRegularFile(at: path)
        precondition(!options.exclusiveWriter || options.mode != .readOnly, "a reader does not claim the writer's lock")
        writerLock = options.exclusiveWriter ? try WriterLock(libraryPath: path) : nil
        var configuration = Configuration()
        configuration.readonly = options.mode == .readOnly
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(options.busyTimeout)
        configuration.label = "tactus-library"
        let synchronous = options.durability == .powerLoss ? "FULL" : "NORMAL"
        let automaticCheckpoints = options.automaticCheckpoints
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if !automaticCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        }
        try Self.refuseUnusableDatabase(at: path)
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw .cannotOpen(path: path, reason: Self.describe(error))
        }
        if !options.automaticCheckpoints && options.mode != .readOnly {
            do {
                // Its restarts of the log wait at most 50 ms for readers: meanwhile the writer waits.
                var checkpointing = configuration
                checkpointing.busyMode = .timeout(0.05)
                checkpointer = try DatabaseQueue(path: path, configuration: checkpointing)
            } catch {
                throw .cannotOpen(path: path, reason: Self.describe(error))
            }
        } else {
            checkpointer = nil
        }
        try checkSchema(mode: options.mode)
        if options.mode != .readOnly { try markAsLibrary() }
    }

    /// The `PRAGMA application_id` of a Tactus library: "TCTS" in ASCII.
    public static let applicationID: Int32 = 0x5443_5453

    /// Throws, having opened the file read-only and so leaving it exactly as it was:
    /// ``StoreError/cannotOpen(path:reason:)`` for an existing SQLite file with tables that is
    /// not a Tactus library, ``StoreError/newerSchema(path:unknownMigrations:)`` for a library
    /// with migrations this tactus does not know (opening it for writing would change its
    /// header before its schema could be read). A file that cannot be read as SQLite here is
    /// left to the real opening to report.
    /// Refuses a path that is there but is not a regular file (after symbolic links): SQLite
    /// would wait for ever for a named pipe's writer, and say only "disk I/O error" of others.
    private static func refuseOtherThanRegularFile(at path: String) throws(StoreError) {
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: kind = "a directory"
        case S_IFIFO: kind = "a named pipe (FIFO)"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR, S_IFBLK: kind = "a device"
        default: kind = "a special file"
        }
        throw .cannotOpen(path: path, reason: "\(kind), not a library file")
    }

    private static func refuseUnusableDatabase(at path: String) throws(StoreError) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = (attributes[.size] as? NSNumber)?.intValue, size > 0
        else { return }
        var configuration = Configuration()
        configuration.readonly = true
        let refusal: UnusableDatabase?
        do {
            let database = try DatabaseQueue(path: readOnlyLocation(of: path), configuration: configuration)
            refusal = try database.read { db -> UnusableDatabase? in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                let migrator = Schema.migrator
                let migrated = tables.contains("grdb_migrations")
                let marked = try Int32.fetchOne(db, sql: "PRAGMA application_id") == applicationID
                if !marked, !tables.isEmpty,
                    try !migrated || Bool.fetchOne(
                        db, sql: "SELECT COUNT(*) = 0 FROM grdb_migrations WHERE identifier = ?",
                        arguments: [migrator.migrations[0]]) == true
                {
                    return .foreign(tables: tables)
                }
                guard migrated else { return nil }
                let known = Set(migrator.migrations)
                let unknown = try migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted()
                return unknown.isEmpty ? nil : .newer(unknownMigrations: unknown)
            }
        } catch {
            return
        }
        switch refusal {
        case .foreign(let tables):
            let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", ..." : "")
            throw .cannotOpen(
                path: path,
                reason: "not a Tactus library (a SQLite database of another program, with the tables \(shown)); it was left unchanged")
        case .newer(let unknown):
            throw .newerSchema(path: path, unknownMigrations: unknown)
        case nil:
            return
        }
    }

    /// What to open to read `path` leaving nothing beside it: a file in WAL mode that no
    /// connection has open (no `-wal` file) as an immutable URI filename, since SQLite would
    /// otherwise create its `-wal` and `-shm` files for a reader and leave them; any other
    /// file by its path.
    private static func readOnlyLocation(of path: String) -> String {
        guard !FileManager.default.fileExists(atPath: path + "-wal"), let file = FileHandle(forReadingAtPath: path) else {
            return path
        }
        defer { try? file.close() }
        // The header: "SQLite format 3\0", ..., byte 18 the read version, 2 for WAL.
        guard let header = try? file.read(upToCount: 20), header.count == 20,
            header.starts(with: Data("SQLite format 3\0".utf8)), header[header.startIndex + 18] == 2,
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
        else { return path }
        return "file:" + encoded + "?immutable=1"
    }

    /// Why ``refuseUnusableDatabase(at:)`` refuses a file.
    private enum UnusableDatabase {
        case foreign(tables: [String])
        case newer(unknownMigrations: [String])
    }

    /// Sets ``applicationID`` on a library that does not have it yet (a new one, or one made
    /// before libraries were marked).
    private func markAsLibrary() throws(StoreError) {
        guard try read({ db in try Int32.fetchOne(db, sql: "PRAGMA application_id") }) != Self.applicationID else { return }
        try write { db in try db.execute(sql: "PRAGMA application_id = \(Self.applicationID)") }
    }

    private func checkSchema(mode: Mode) throws(StoreError) {
        let migrator = Schema.migrator
        let (unknown, complete): ([String], Bool)
        do {
            (unknown, complete) = try pool.read { db in
                let known = Set(migrator.migrations)
                return (
                    try migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted(),
                    try migrator.hasCompletedMigrations(db)
                )
            }
        } catch {
            throw .cannotOpen(path: path, reason: Self.describe(error))
        }
        if !unknown.isEmpty {
            throw .newerSchema(path: path, unknownMigrations: unknown)
        }
        if complete { return }
        if mode == .readOnly {
            throw .cannotOpen(path: path, reason: "not a Tactus library, or one that needs a write to update its schema")
        }
        do {
            try migrator.migrate(pool)
        } catch {
            throw .cannotOpen(path: path, reason: Self.describe(error))
        }
    }

    /// The names of the schema migrations, in order; the last one is the current schema.
    public static var schemaMigrations: [String] { Schema.migrator.migrations }

    /// Refuses a tempo outside ``acceptedBPM``, naming `field`.
    static func checkBPM(_ bpm: Double, field: String) throws(StoreError) {
        guard bpm.isFinite, TempoQuery.acceptedBPM.contains(bpm) else { throw .bpmOutOfRange(field: field, value: bpm) }
    }

    /// Runs `body` in one write transaction; a thrown error rolls everything back.
    func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        try storeErrors { try pool.write(body) }
    }

    /// Runs `body` for each of `items` in write transactions of at most 1,000 items each: a long
    /// list (a scan's rows) does not hold the one writer for all of it at once.
    func writeInBatches<Item>(_ items: [Item], _ body: (Database, Item) throws -> Void) throws(StoreError) {
        for start in stride(from: 0, to: items.count, by: 1000) {
            try write { db in
                for item in items[start..<min(start + 1000, items.count)] { try body(db, item) }
            }
        }
    }

    /// Runs `body` on a reader connection, in a snapshot isolated from concurrent writes.
    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        try storeErrors { try pool.read(body) }
    }

    /// Runs `body`, which runs one SQL statement, on a reader connection outside a
    /// transaction: a single statement reads one consistent snapshot by itself, and the
    /// `BEGIN`/`COMMIT` around it would cost more than the small lookups the coordinator makes
    /// for every job. A body running several statements uses ``read(_:)``.
    func readStatement<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        try storeErrors { try pool.unsafeRead(body) }
    }

    /// Runs `access`, an access to the pool, with its errors as ``StoreError``s.
    private func storeErrors<T>(_ access: () throws -> T) throws(StoreError) -> T {
        do {
            return try access()
        } catch let error as StoreError {
            throw error
        } catch {
            throw storeError(error)
        }
    }

    /// `error` as a ``StoreError``: ``StoreError/locked(path:waitedS:)`` when the busy timeout
    /// ran out, ``StoreError/full(path:)`` when the disk is full, ``StoreError/database(_:)`` otherwise.
    private func storeError(_ error: any Error) -> StoreError {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            return .locked(path: path, waitedS: busyTimeout)
        }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL {
            return .full(path: path)
        }
        return .database(Self.describe(error))
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "\(error.resultCode): \(error.message ?? "no message")"
        }
        return String(describing: error)
    }

    /// Writes the last changes into the main database file and truncates the WAL (for a
    /// clean shutdown or a backup).
    public func checkpoint() throws(StoreError) {
        do {
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        } catch {
            throw .database(Self.describe(error))
        }
    }

    /// Copies what it can of the write-ahead log into the database file without waiting for
    /// the writer or the readers (a passive checkpoint), on a connection of its own, so that
    /// the writer's commits never wait for it. For a library opened without
    /// ``Options/automaticCheckpoints``, from a thread other than the writer's; otherwise a no-op.
    ///
    /// A log that readers keep in use is never started over by the writer, and would grow
    /// without end under steady reads and writes. So once it holds more than
    /// `restartingLogAbove` frames (pages) and all of them are in the database file, the log
    /// is started over (a restart checkpoint: it waits at most 50 ms for the readers still on
    /// the log, holding the writer meanwhile, so that the next commit writes at the log's
    /// beginning; the file keeps its size for reuse). When the readers take longer it is tried
    /// again at the next call. (Emptying the file as well, a truncating checkpoint, held the
    /// writer longer under load.)
    public func checkpointInBackground(restartingLogAbove frames: Int = 4096) throws(StoreError) {
        guard let checkpointer else { return }
        do {
            try checkpointer.writeWithoutTransaction { db in
                let (log, copied) = try db.checkpoint(.passive)
                guard log > frames, copied == log else { return }
                do {
                    _ = try db.checkpoint(.restart)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                    return  // readers stayed on the log: next time
                }
            }
        } catch {
            throw .database(Self.describe(error))
        }
    }

    /// Runs `PRAGMA integrity_check`; returns its lines (`["ok"]` for a sound file).
    public func integrityCheck() throws(StoreError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }
}
