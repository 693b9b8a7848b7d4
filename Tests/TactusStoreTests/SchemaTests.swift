import Foundation
import GRDB
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct SchemaTests {
    @Test func createsTheSchemaInWALModeWithForeignKeys() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.pool.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal")
            #expect(try Int.fetchOne(db, sql: "PRAGMA foreign_keys") == 1)
            let tables = try String.fetchSet(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            #expect(tables.isSuperset(of: ["songs", "analyses", "consensus", "reference_tempi", "grdb_migrations"]))
            let indexes = try String.fetchSet(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index'")
            #expect(indexes.isSuperset(of: ["analyses_identity", "analyses_by_detector_bpm", "consensus_by_bpm"]))
            #expect(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") == Library.schemaMigrations)
        }
        let (timeout, synchronous) = try library.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA busy_timeout"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(timeout == 10_000)
        #expect(synchronous == 1)  // NORMAL
    }

    @Test func reopeningKeepsTheDataAndRunsNoMigrationTwice() throws {
        let directory = try TemporaryDirectory()
        try Fixture.library(in: directory).record(Fixture.song(1), analyses: [Fixture.record("alpha", bpm: 120)])
        let reopened = try Library(path: directory.file("library.sqlite"), options: .init(mode: .existing))
        #expect(try reopened.counts() == LibraryCounts(songs: 1, analyses: 1, references: 0))
        let readOnly = try Library(path: directory.file("library.sqlite"), options: .init(mode: .readOnly))
        #expect(try readOnly.song(Fixture.songID(1))?.fileName == "song-1.flac")
        #expect(throws: StoreError.self) { try readOnly.setReference(120, for: Fixture.songID(1)) }
    }

    @Test func refusesAMissingFileUnlessAskedToCreateIt() throws {
        let directory = try TemporaryDirectory()
        for mode in [Library.Mode.existing, .readOnly] {
            #expect(throws: StoreError.cannotOpen(path: directory.file("none.sqlite"), reason: "no such file")) {
                try Library(path: directory.file("none.sqlite"), options: .init(mode: mode))
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("none.sqlite")))
    }

    /// A named pipe would make SQLite wait for ever for a writer (`query --db` never returned),
    /// and other special files fail with "disk I/O error": each is refused, named for what it is.
    @Test func refusesWhatIsNotARegularFileSayingWhatItIs() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("fifo.sqlite")
        try #require(mkfifo(fifo, 0o600) == 0)
        let folder = directory.file("folder.sqlite")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for (path, kind) in [(fifo, "a named pipe (FIFO)"), (folder, "a directory"), ("/dev/null", "a device")] {
            for mode in [Library.Mode.existing, .readOnly, .create] {
                #expect(throws: StoreError.cannotOpen(path: path, reason: "\(kind), not a library file")) {
                    try Library(path: path, options: .init(mode: mode))
                }
            }
        }
    }

    @Test func refusesAFileFromANewerTactus() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.pool.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
        }
        #expect(throws: StoreError.newerSchema(path: directory.file("library.sqlite"), unknownMigrations: ["v99: from the future"])) {
            try Library(path: directory.file("library.sqlite"))
        }
    }

    /// A library from a newer tactus is refused in every mode without a byte of it written (its
    /// header, its pages) and without a WAL or shared-memory file left beside it, as another
    /// program's database is.
    @Test func refusesAFileFromANewerTactusWithoutWritingToIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("library.sqlite")
        try {
            let library = try Fixture.library(in: directory)
            try library.record(Fixture.song(1), analyses: [Fixture.record("alpha", bpm: 120)])
            try library.pool.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
            }
        }()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["library.sqlite"], "the library was not closed: \(files)")
        for mode in [Library.Mode.create, .existing, .readOnly] {
            #expect(throws: StoreError.newerSchema(path: path, unknownMigrations: ["v99: from the future"]), "\(mode)") {
                try Library(path: path, options: .init(mode: mode))
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "opening it for \(mode) changed it")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == files, "opening it for \(mode)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == files)
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        let directory = try TemporaryDirectory()
        try Data("this is not sqlite, just text that is long enough to look like a header".utf8)
            .write(to: URL(fileURLWithPath: directory.file("text.sqlite")))
        #expect(throws: StoreError.self) { try Library(path: directory.file("text.sqlite")) }
    }

    /// Another program's SQLite database is refused, and not one byte of it (nor a WAL or a
    /// journal beside it) is written.
    @Test func refusesAnotherProgramsDatabaseWithoutWritingToIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("contacts.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for mode in [Library.Mode.create, .existing, .readOnly] {
            do {
                _ = try Library(path: path, options: .init(mode: mode))
                Issue.record("another program's database was opened as a library (\(mode))")
            } catch {
                guard case .cannotOpen(let named, let reason) = error else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                #expect(named == path)
                #expect(reason.contains("not a Tactus library") && reason.contains("contacts"), "\(reason)")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["contacts.sqlite"])
    }

    /// A new library carries Tactus's application id; a library made before libraries were
    /// marked (recognised by its migrations) opens and gets the mark.
    @Test func marksNewLibrariesAndRecognisesUnmarkedOnes() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [Fixture.record("alpha", bpm: 120)])
        #expect(try library.pool.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") } == Library.applicationID)
        try library.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA application_id = 0") }
        let readOnly = try Library(path: directory.file("library.sqlite"), options: .init(mode: .readOnly))
        #expect(try readOnly.counts().songs == 1)
        let reopened = try Library(path: directory.file("library.sqlite"), options: .init(mode: .existing))
        #expect(try reopened.counts().songs == 1)
        #expect(try reopened.pool.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") } == Library.applicationID)
    }

    /// A write that needs a page the disk cannot give (SQLite's page limit stands in for a full
    /// disk) is ``StoreError/full(path:)``, which a server answers as `unavailable`, not as an
    /// internal database error; nothing is written.
    @Test func aFullDiskIsReportedAsFull() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [Fixture.record("alpha", bpm: 120)])
        try library.pool.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        #expect(throws: StoreError.full(path: directory.file("library.sqlite"))) {
            try library.setReference(120, for: Fixture.songID(1), source: String(repeating: "x", count: 200_000))
        }
        #expect(try library.reference(for: Fixture.songID(1)) == nil)
    }
}
