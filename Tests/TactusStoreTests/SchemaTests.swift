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

    @Test func refusesAFileThatIsNotADatabase() throws {
        let directory = try TemporaryDirectory()
        try Data("this is not sqlite, just text that is long enough to look like a header".utf8)
            .write(to: URL(fileURLWithPath: directory.file("text.sqlite")))
        #expect(throws: StoreError.self) { try Library(path: directory.file("text.sqlite")) }
    }
}
