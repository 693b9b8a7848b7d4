import Foundation
import GRDB
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// Beat positions (schema v5): stored with an analysis, read back with its windows, checked
/// before they are written.
@Suite struct BeatPositionsTests {
    private func record(beats: BeatPositions?) -> AnalysisRecord {
        var record = Fixture.record("beatnet", bpm: 120)
        record.analysis.beats = beats
        return record
    }

    @Test func beatsRoundTripWithTheWindowsAndAreAbsentWithout() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(3)
        let beats = BeatPositions(times: [0.48, 0.98, 1.5, 2.0, 2.52], downbeats: [0.48, 2.52])
        _ = try library.record(song, analyses: [record(beats: beats), Fixture.record("comb-filter", bpm: 120)])

        let reopened = try Library(path: directory.file("library.sqlite"), options: .init(mode: .readOnly))
        let stored = try reopened.analyses(of: song.id, windows: true)
        #expect(stored.first { $0.record.analysis.detector == "beatnet" }?.record.analysis.beats == beats)
        #expect(stored.first { $0.record.analysis.detector == "comb-filter" }?.record.analysis.beats == nil)
        #expect(try reopened.analyses(of: song.id, windows: false).allSatisfy { $0.record.analysis.beats == nil })
        // The column is plain JSON, readable without Tactus.
        try reopened.pool.read { db in
            let text = try #require(try String.fetchOne(db, sql: "SELECT beats_json FROM analyses WHERE detector = 'beatnet'"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [Double]])
            #expect(object == ["times": [0.48, 0.98, 1.5, 2, 2.52], "downbeats": [0.48, 2.52]])
        }
    }

    @Test(arguments: [
        BeatPositions(times: [1, .nan]),
        BeatPositions(times: [-0.5, 1]),
        BeatPositions(times: [2, 1]),
        BeatPositions(times: [1, 2], downbeats: [.infinity]),
    ])
    func beatsThatAreNotTimesInOrderAreRefusedAndNothingIsWritten(beats: BeatPositions) throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(4)
        #expect(throws: StoreError.self) { try library.record(song, analyses: [record(beats: beats)]) }
        #expect(try library.song(song.id) == nil)  // the whole record was refused
    }
}
