import Foundation
import GRDB
import Testing
@testable import TactusStore

@Suite struct ConcurrencyAndPlanTests {
    /// The coordinator answers queries while it writes: a reader never waits for a writer.
    @Test func readersDoNotWaitForAWriteInProgress() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("library.sqlite")
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
    ])
    func queriesSearchTheIndexes(_ query: TempoQuery) throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 20) { n in (100 + Double(n), 101 + Double(n), 60) }
        let plan = try library.queryPlan(query)
        #expect(plan.contains { $0.contains("USING COVERING INDEX analyses_by_detector_bpm") || $0.contains("USING COVERING INDEX consensus_by_bpm") })
        #expect(!plan.contains { $0.contains("SCAN a") || $0.contains("SCAN analyses") || $0.contains("SCAN consensus") }, "\(plan)")
    }
}
