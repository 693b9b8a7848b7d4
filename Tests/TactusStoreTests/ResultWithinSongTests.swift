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

    @Test func aResultKeepsItsStrongestCandidatesAndNoEnvelopeLongerThanTheSong() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(1, duration: 30)
        let jobs = try library.enqueue(song, jobs: [JobRequest(detector: "a"), JobRequest(detector: "b")])
        var crowded = record(windows: [0, 3])
        crowded.analysis.candidates = (0..<5000).map { TempoCandidate(bpm: 60 + Double($0 % 100), strength: 1 / Double($0 + 1)) }
        // An envelope of a million values at a microsecond's hop is a second long, but the
        // song is 30 s: it fits. Ten thousand values at a second's hop do not.
        let short = EnergyEnvelope(hopS: 1e-6, values: [Float](repeating: 0.5, count: 1_000_000))
        let long = EnergyEnvelope(hopS: 1, values: [Float](repeating: 0.5, count: 10_000))
        let first = try library.startJob(jobs[0].id, worker: "w")
        _ = try library.finishJob(jobs[0].id, attempt: first, result: crowded, durationS: 30, envelope: long)
        let stored = try #require(try library.analyses(of: song.id).first)
        #expect(stored.record.analysis.candidates == Array(crowded.analysis.candidates.prefix(32)))
        #expect(try library.song(song.id)?.envelope == song.envelope, "an envelope longer than the song is left out")
        let second = try library.startJob(jobs[1].id, worker: "w")
        let other = AnalysisRecord(Fixture.analysis("b", bpm: 124, windows: 5), worker: "w", analyzedAt: Date())
        _ = try library.finishJob(jobs[1].id, attempt: second, result: other, durationS: 30, envelope: short)
        #expect(try library.song(song.id)?.envelope == short)
        // Beyond the most any song holds, whatever its duration.
        let huge = EnergyEnvelope(hopS: 1e-6, values: [Float](repeating: 0, count: PackedEnvelope.maximumValues + 1))
        #expect(!PackedEnvelope.fits(huge, durationS: nil) && !PackedEnvelope.fits(EnergyEnvelope(hopS: 1e-9, values: [1]), durationS: nil))
    }
}
