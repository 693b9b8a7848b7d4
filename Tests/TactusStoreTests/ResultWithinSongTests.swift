import Foundation
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// A worker's result must lie within the song it is of: its windows in time order, starting
/// within the song's duration, at most ten a second, and its beats within the song (the
/// duration the worker measured, else four times the stored one, a header's estimate, plus a
/// minute). A result that does not is refused whole, and nothing of it (nor the duration it
/// came with) is stored.
@Suite struct ResultWithinSongTests {
    /// Analysis by `a` of a song with `windows` (start times) and `beats`.
    func record(windows starts: [Double], beats: [Double]? = nil) -> AnalysisRecord {
        var record = Fixture.record("a", bpm: 124)
        record.analysis.windows = starts.map { AnalysisWindow(startS: $0, durationS: 12, energy: 0.01, bpm: 124, strength: 0.5) }
        record.analysis.beats = beats.map { BeatPositions(times: $0, downbeats: nil) }
        return record
    }

    @Test func windowsAndBeatsBeyondTheSongOrOutOfOrderAreRefused() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(1, duration: 30)
        let job = try #require(try library.enqueue(song, jobs: [JobRequest(detector: "a")]).first)
        let attempt = try library.startJob(job.id, worker: "w")
        let hostile: [(String, AnalysisRecord, Double?)] = [
            ("a window starting after the song", record(windows: [0, 3, 1_000_000]), nil),
            ("windows out of order", record(windows: [0, 6, 3]), nil),
            ("more than ten windows a second", record(windows: (0..<400).map { Double($0) * 0.05 }), 30),
            ("a beat after the song", record(windows: [0, 3], beats: [0.5, 1, 35]), 30),
            ("a beat long after the stored duration (a worker that does not say)", record(windows: [0, 3], beats: [0.5, 500]), nil),
            ("windows beyond the duration the worker measured", record(windows: [0, 3, 20]), 10),
        ]
        for (name, result, duration) in hostile {
            #expect(throws: StoreError.self, "\(name)") {
                try library.finishJob(job.id, attempt: attempt, result: result, durationS: duration)
            }
        }
        #expect(try library.analyses(of: song.id).isEmpty, "nothing stored")
        #expect(try library.song(song.id)?.durationS == 30, "the duration unchanged")
        let good = record(windows: stride(from: 0.0, through: 18, by: 3).map { $0 }, beats: [0.5, 1, 29.9])
        #expect(try library.finishJob(job.id, attempt: attempt, result: good, durationS: 30.5) != nil)
        #expect(try library.analyses(of: song.id).count == 1)
    }
}
