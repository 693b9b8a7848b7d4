import Foundation
import GRDB
import TactusAudio
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct PackedSeriesTests {
    @Test func windowSeriesLayoutIsFiveLittleEndianFloat32PerWindow() throws {
        let windows = [
            AnalysisWindow(startS: 1.5, durationS: 6, energy: 0.25, bpm: 120, strength: 0.5),
            AnalysisWindow(startS: 6, durationS: 6, energy: 0, bpm: nil, strength: 0),
        ]
        let blob = PackedWindows.encode(windows)
        #expect(blob.count == 40)
        // 1.5 as float32 is 0x3FC00000: bytes 00 00 C0 3F in little-endian order.
        #expect(Array(blob.prefix(4)) == [0x00, 0x00, 0xC0, 0x3F])
        // 120 as float32 is 0x42F00000, at offset 12.
        #expect(Array(blob[12..<16]) == [0x00, 0x00, 0xF0, 0x42])
        // A window without a tempo has NaN at offset 20 + 12.
        let missing = UInt32(blob[32]) | UInt32(blob[33]) << 8 | UInt32(blob[34]) << 16 | UInt32(blob[35]) << 24
        #expect(Float(bitPattern: missing).isNaN)
        #expect(PackedWindows.decode(blob) == windows)
        #expect(PackedWindows.decode(Data(count: 21)) == nil)
        #expect(PackedWindows.decode(Data()) == [])
    }

    @Test func envelopeLayoutIsLittleEndianFloat32() throws {
        let envelope = EnergyEnvelope(hopS: 0.0232, values: [1, -2, 0.5])
        let blob = PackedEnvelope.encode(envelope)
        #expect(Array(blob) == [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00, 0x3F])
        #expect(PackedEnvelope.decode(blob, hopS: 0.0232) == envelope)
        #expect(PackedEnvelope.decode(Data(count: 5), hopS: 1) == nil)
    }

    @Test func songsAndAnalysesRoundTripThroughTheFile() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let song = Fixture.song(7)
        let done = Fixture.record("alpha", bpm: 128.25, confidence: 0.9)
        let none = Fixture.record("beta", bpm: nil, confidence: 0)
        let failed = AnalysisRecord.failed(
            detector: "gamma", version: "2", params: ParameterSet(["preset": .text("default")]),
            failure: AnalysisFailure(code: .truncated, message: "the file ends early"), seconds: 0.5,
            worker: "w9", analyzedAt: Date(timeIntervalSince1970: 1_750_000_000))
        try library.record(song, analyses: [done, none, failed])

        // Reopen so nothing comes from a cache.
        let reopened = try Library(path: directory.file("library.sqlite"), options: .init(mode: .readOnly))
        #expect(try reopened.song(song.id) == song)
        let stored = try reopened.analyses(of: song.id, windows: true)
        #expect(stored.map(\.record.analysis.detector) == ["alpha", "beta", "gamma"])
        #expect(stored.map(\.record.status) == [.done, .noTempo, .failed])

        let alpha = stored[0].record
        #expect(alpha.analysis.bpm == 128.25)
        #expect(alpha.analysis.confidence == 0.9)
        #expect(alpha.analysis.candidates == done.analysis.candidates)
        #expect(alpha.analysis.params == done.analysis.params)
        #expect(alpha.worker == "worker-1")
        #expect(alpha.analyzedAt == done.analyzedAt)
        #expect(alpha.analysis.windows.count == 40)
        for (read, written) in zip(alpha.analysis.windows, done.analysis.windows) {
            #expect(read.startS == float32(written.startS))
            #expect(read.durationS == float32(written.durationS))
            #expect(read.energy == float32(written.energy))
            #expect(read.bpm == written.bpm.map(float32))
            #expect(read.strength == float32(written.strength))
        }
        #expect(stored[0].paramsHash == done.paramsHash)
        #expect(stored[1].record.analysis.reason == "silence")
        #expect(stored[2].record.failure == AnalysisFailure(code: .truncated, message: "the file ends early"))
        #expect(stored[2].record.worker == "w9")
        #expect(try reopened.analyses(of: song.id, windows: false)[0].record.analysis.windows.isEmpty)

        // The BLOB in the file is the documented layout, readable without Tactus.
        try reopened.pool.read { db in
            let length = try Int.fetchOne(db, sql: "SELECT length(windows) FROM analyses WHERE detector = 'alpha'")
            #expect(length == 40 * 20)
            let envelope = try Int.fetchOne(db, sql: "SELECT length(envelope) FROM songs")
            #expect(envelope == 50 * 4)
        }
    }

    @Test func candidatesAreJSONArraysOfBPMAndStrength() throws {
        let candidates = [
            TempoCandidate(bpm: 120, strength: 1), TempoCandidate(bpm: 60.123456789, strength: 1e-05),
            TempoCandidate(bpm: 240.5, strength: 0),
        ]
        let text = CandidatesJSON.encode(candidates)
        #expect(text.hasPrefix("[{\"bpm\":120.0,\"strength\":1.0},{\"bpm\":60.123456789,"))
        // Any JSON reader sees the same values.
        #expect(try JSONDecoder().decode([TempoCandidate].self, from: Data(text.utf8)) == candidates)
        #expect(CandidatesJSON.decode(text) == candidates)
        #expect(CandidatesJSON.encode([]) == "[]")
        #expect(CandidatesJSON.decode("[]") == [])
        // JSON written by someone else, with spaces and another key order, is read too.
        #expect(CandidatesJSON.decode(" [ {\"strength\": 0.5, \"bpm\": 90} ] ") == [TempoCandidate(bpm: 90, strength: 0.5)])
    }

    @Test func parameterHashIsTheSHA256OfTheCanonicalJSON() throws {
        let record = Fixture.record("alpha", bpm: 120)
        let json = record.analysis.params.canonicalJSON
        #expect(json.hasPrefix("{\"max_bpm\":200"))
        #expect(record.paramsHash == SongID(hashing: Data(json.utf8)).hex)
    }
}
