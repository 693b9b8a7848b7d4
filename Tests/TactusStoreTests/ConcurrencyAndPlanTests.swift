import Foundation
import GRDB
import Synchronization
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct ConcurrencyAndPlanTests {
    /// The coordinator answers queries while it writes: a reader never waits for a writer.
    @Test func readersDoNotWaitForAWriteInProgress() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("library.sqlite")
        let writer = try Library(path: path)
        try Fixture.populate(writer, count: 10) { n in (100 + Double(n), 100 + Double(n), nil) }
        let reader = try Library(path: path, options: .init(mode: .readOnly))

        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? writer.pool.write { db in
                try db.execute(sql: "DELETE FROM reference_tempi")
                try db.execute(sql: "UPDATE consensus SET bpm = 1")
                inside.signal()
                release.wait()
            }
            done.signal()
        }
        inside.wait()
        // The write transaction is open and holds the write lock; reads see the last commit.
        let started = Date()
        let matches = try reader.query(TempoQuery(range: 100...110))
        let sameProcess = try writer.query(TempoQuery(range: 100...110))
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(matches.count == 10)
        #expect(sameProcess == matches)
        release.signal()
        done.wait()
        #expect(try reader.query(TempoQuery(range: 100...110)).isEmpty)
    }

    /// Range queries are index range scans, never a scan of a whole table.
    @Test(arguments: [
        TempoQuery(range: 120...130), TempoQuery(range: 120...130, octave: true, limit: 20),
        TempoQuery(range: 120...130, source: .detector("alpha"), octave: true, order: .bpm, limit: 5),
        TempoQuery(range: 120...130, source: .agreement(minimum: 2), limit: 5),
        TempoQuery(range: 120...130, source: .detector("alpha"), order: .newest, descending: true, limit: 5),
        TempoQuery(range: 120...130, octave: true, order: .title, limit: 50, offset: 50),
        TempoQuery(range: 120...130, source: .detector("alpha"), octave: true, order: .confidence, descending: true, limit: 5),
        TempoQuery(range: 120...130, source: .agreement(minimum: 2), order: .agreement, limit: 5),
    ])
    func queriesSearchTheIndexes(_ query: TempoQuery) throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 20) { n in (100 + Double(n), 101 + Double(n), 60) }
        let plan = try library.queryPlan(query)
        #expect(plan.contains { $0.contains("USING COVERING INDEX analyses_by_detector_bpm") || $0.contains("USING COVERING INDEX consensus_by_bpm") })
        #expect(!plan.contains { $0.contains("SCAN a") || $0.contains("SCAN analyses") || $0.contains("SCAN consensus") }, "\(plan)")
        // Missing songs are listed from their partial index, not looked up in (or scanned from) songs.
        #expect(plan.contains { $0.contains("USING INDEX songs_missing") } && !plan.contains { $0.contains("SCAN songs") && !$0.contains("songs_missing") }, "\(plan)")
    }

    /// A page by title or duration of a range holding most songs walks the songs in that order
    /// (their index) instead of sorting every match; a sparse range sorts its few matches.
    @Test func densePagesByTitleOrDurationWalkTheSongsInOrder() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 200) { n in (100 + Double(n % 50), 101 + Double(n % 50), 60) }
        for (order, index) in [(TempoOrder.title, "songs_by_title"), (.duration, "songs_by_duration"), (.artist, "songs_by_artist")] {
            for descending in [false, true] {
                let dense = try library.queryPlan(TempoQuery(range: 1...1000, order: order, descending: descending, limit: 20))
                #expect(dense.contains { $0.contains(index) }, "\(dense)")
                // The walk gives the order: only the page's few rows are sorted again (the outer query).
                #expect(dense.filter { $0.contains("TEMP B-TREE FOR ORDER BY") }.count == 1, "\(dense)")
                #expect(!dense.contains { $0.contains("SCAN a") || $0.contains("SCAN consensus") }, "\(dense)")
                let sparse = try library.queryPlan(TempoQuery(range: 120...121, order: order, descending: descending, limit: 20))
                #expect(sparse.contains { $0.contains("USING COVERING INDEX consensus_by_bpm") } && !sparse.contains { $0.contains(index) }, "\(sparse)")
            }
        }
    }

    @Test(arguments: [
        TempoQuery(range: 1...1000, order: .title, limit: 20), TempoQuery(range: 1...1000, order: .duration, descending: true, limit: 20, offset: 7),
        TempoQuery(range: 100...130, source: .agreement(minimum: 2), octave: true, order: .title, descending: true, limit: 5, offset: 3),
        TempoQuery(range: 1...1000, order: .artist, limit: 30, offset: 20), TempoQuery(range: 1...1000, order: .artist, descending: true, limit: 30, offset: 20),
    ])
    func aWalkOverTheSongsGivesTheSamePageAsSortingEveryMatch(_ query: TempoQuery) throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(
            (0..<200).map { n in
                var song = Fixture.song(n, duration: Double(100 + n % 13))
                song.tags.title = n % 6 == 0 ? nil : "Title \(n % 17)"
                song.tags.artist = n % 4 == 0 ? nil : n % 4 == 1 ? "" : "artist \(n % 11)"
                return SongAnalyses(
                    song: song,
                    analyses: [
                        Fixture.record("alpha", bpm: 50 + Double(n % 90)), Fixture.record("beta", bpm: 51 + Double(n % 90)),
                        Fixture.record("gamma", bpm: n % 5 == 0 ? nil : 200),
                    ])
            })
        let plan = try library.queryPlan(query)
        #expect(plan.contains { $0.contains("songs_by_") }, "\(plan)")
        var everything = query
        everything.limit = nil
        everything.offset = 0
        #expect(try library.query(query) == Array(try library.query(everything).dropFirst(query.offset).prefix(query.limit!)))
    }
}

@Suite struct BackgroundCheckpointTests {
    /// Pages in the library's write-ahead log file.
    private func walPages(_ library: Library) throws -> Int {
        let size = try FileManager.default.attributesOfItem(atPath: library.path + "-wal")[.size] as? Int ?? 0
        return size / 4096
    }

    /// The songs in the library's database file alone, as a copy without its log sees them.
    private func songsInTheFile(_ library: Library, _ directory: TemporaryDirectory) throws -> Int {
        let copy = directory.file("copy-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(atPath: library.path, toPath: copy)
        let queue = try DatabaseQueue(path: copy)
        return try queue.read { db in
            try db.tableExists("songs") ? Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0 : 0
        }
    }

    /// Writes well past SQLite's automatic threshold of 1000 pages: 60 songs whose
    /// envelopes are rewritten 8 times. Returns the number of songs.
    private func fill(_ library: Library) throws -> Int {
        for batch in 0..<8 {
            try Fixture.populate(library, count: 60) { n in (100 + Double(n + batch), nil, nil) }
            try library.pool.write { db in try db.execute(sql: "UPDATE songs SET envelope = zeroblob(20000)") }
        }
        return try library.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0 }
    }

    /// Without automatic checkpoints a commit never copies the log into the file, however
    /// long the log grows; `checkpointInBackground()` copies all of it.
    @Test func commitsLeaveTheLogToTheBackgroundCheckpoint() throws {
        let directory = try TemporaryDirectory()
        let library = try Library(path: directory.file("library.sqlite"), options: .init(automaticCheckpoints: false))
        let songs = try fill(library)
        #expect(songs == 60)
        #expect(try walPages(library) > 1500)
        #expect(try songsInTheFile(library, directory) == 0)

        try library.checkpointInBackground()
        #expect(try songsInTheFile(library, directory) == songs)
        #expect(try library.integrityCheck() == ["ok"])
    }

    /// Frames in the log now (a passive checkpoint on a connection of the test's: it reports
    /// the log's length and copies what it can).
    private func logFrames(_ library: Library) throws -> Int {
        try DatabaseQueue(path: library.path).writeWithoutTransaction { db in try db.checkpoint(.passive).walFrameCount }
    }

    /// A reader that stays on the log neither makes the call wait more than a moment nor
    /// fails it: the log is started over at a later call.
    @Test func aReaderOnTheLogDelaysItsRestartWithoutHoldingTheCall() throws {
        let directory = try TemporaryDirectory()
        let library = try Library(path: directory.file("library.sqlite"), options: .init(automaticCheckpoints: false))
        let songs = try fill(library)
        let reader = try DatabaseQueue(path: library.path)
        try reader.inDatabase { db in
            // A read that starts before the log is copied keeps a snapshot on it.
            try db.beginTransaction(.deferred)
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM songs")
            let started = ContinuousClock.now
            try library.checkpointInBackground(restartingLogAbove: 0)
            #expect(ContinuousClock.now - started < .seconds(1))
            let before = try logFrames(library)
            try Fixture.populate(library, count: 1) { _ in (120, nil, nil) }
            #expect(try logFrames(library) > before, "the reader keeps the log from starting over")
            try db.rollback()
        }
        try library.checkpointInBackground(restartingLogAbove: 0)
        try Fixture.populate(library, count: 1) { _ in (121, nil, nil) }
        #expect(try logFrames(library) < 100, "started over once the reader left")
        #expect(try songsInTheFile(library, directory) == songs)
        #expect(try library.integrityCheck() == ["ok"])
    }

    /// Under reads that never stop, the writer alone never starts the log over (some reader
    /// is always on it); the background checkpoint does, so the log stays short.
    @Test func underSteadyReadsTheLogStaysShort() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("library.sqlite")
        func writeUnderReads(_ library: Library) throws -> Int {
            let stop = Mutex(false)
            let reading = DispatchSemaphore(value: 0)
            let reader = try DatabaseQueue(path: library.path)
            Thread.detachNewThread {
                while !stop.withLock({ $0 }) {
                    _ = try? reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") }
                }
                reading.signal()
            }
            for _ in 0..<40 {
                for n in 0..<20 {
                    try library.pool.write { db in
                        try db.execute(sql: "UPDATE songs SET envelope = zeroblob(8000) WHERE sha256 = ?", arguments: [Fixture.songID(n).hex])
                    }
                }
                try library.checkpointInBackground(restartingLogAbove: 200)
            }
            stop.withLock { $0 = true }
            reading.wait()
            return try logFrames(library)
        }
        let library = try Library(path: path, options: .init(automaticCheckpoints: false))
        try Fixture.populate(library, count: 20) { n in (100 + Double(n), nil, nil) }
        try library.checkpointInBackground()
        let restarted = try writeUnderReads(library)
        #expect(restarted < 1000)
        #expect(try library.integrityCheck() == ["ok"])
    }

    /// The default library checkpoints as SQLite does, so its log file stays near 1000 pages.
    @Test func aLibraryWithAutomaticCheckpointsCopiesTheLogAsItGrows() throws {
        let directory = try TemporaryDirectory()
        let library = try Library(path: directory.file("library.sqlite"))
        let songs = try fill(library)
        #expect(try walPages(library) < 1500)
        #expect(try songsInTheFile(library, directory) == songs)
    }
}
