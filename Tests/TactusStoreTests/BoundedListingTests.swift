import Foundation
import GRDB
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

/// What anyone who may write a song's file, a library folder or the library file itself can put
/// there stays within what a listing of the library may carry, and never stops a reader.
@Suite struct BoundedListingTests {
    @Test func textTagsAreKeptToAThousandCharacters() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let title = String(repeating: "t", count: 3_000_000), artist = String(repeating: "é", count: 2_000_000)
        try library.record(
            [SongAnalyses(song: Fixture.song(0, title: title, artist: artist), analyses: [Fixture.record("alpha", bpm: 120)])])
        let stored = try #require(try library.song(Fixture.songID(0)))
        #expect(stored.tags.title?.count == AudioTags.maxTextCharacters && stored.tags.title?.hasSuffix("…") == true)
        #expect(stored.tags.artist == String(repeating: "é", count: AudioTags.maxTextCharacters - 1) + "…")
        let match = try #require(try library.query(TempoQuery(range: 100...140)).first)
        #expect(match.title?.count == AudioTags.maxTextCharacters && match.artist?.count == AudioTags.maxTextCharacters)
        // One character of a million combining accents is cut like a million characters.
        let accents = AudioTags.bounded("a" + String(repeating: "\u{301}", count: 1_000_000))
        #expect(accents?.unicodeScalars.count == AudioTags.maxTextCharacters && (accents?.utf8.count ?? .max) < 4_000)
        // A short tag is kept as it is.
        #expect(AudioTags(title: "Intro", genre: "").bounded() == AudioTags(title: "Intro", genre: ""))
    }

    @Test func aMatchListsSixteenPathsAndCountsTheRest() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 2) { _ in (120, 120, 120) }
        for n in 0..<20 {
            try library.recordLocation(
                SongLocation(root: "/music", path: "copies/\(String(format: "%02d", n)).flac", byteSize: 1, mtimeNs: 0), of: Fixture.songID(0))
        }
        try library.recordLocation(SongLocation(root: "/music", path: "one.flac", byteSize: 1, mtimeNs: 0), of: Fixture.songID(1))
        let matches = Dictionary(uniqueKeysWithValues: try library.query(TempoQuery(range: 100...140)).map { ($0.song, $0) })
        let copied = try #require(matches[Fixture.songID(0)])
        #expect(copied.paths == (0..<16).map { "/music/copies/\(String(format: "%02d", $0)).flac" })
        #expect(copied.pathCount == 20)
        #expect(matches[Fixture.songID(1)]?.paths == ["/music/one.flac"] && matches[Fixture.songID(1)]?.pathCount == nil)
        // On the wire: path_count only when some are left out.
        let encoded = String(decoding: try JSONEncoder().encode(copied), as: UTF8.self)
        #expect(encoded.contains("\"path_count\":20"))
        #expect(!String(decoding: try JSONEncoder().encode(matches[Fixture.songID(1)]), as: UTF8.self).contains("path_count"))
    }

    /// A library file edited to hold enormous values (found by the third attack round: `plot
    /// --db` ran over two minutes on 600,000 candidates, and a 100 MB envelope took gigabytes)
    /// reads them as none, without decoding them.
    @Test func enormousValuesEditedByHandReadAsNone() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 1) { _ in (120, 120, 60) }
        let candidate = "{\"bpm\":120.0,\"strength\":0.5}"
        let candidates = "[" + Array(repeating: candidate, count: CandidatesJSON.maximumTextBytes / candidate.utf8.count).joined(separator: ",") + "]"
        let beats = "{\"times\":[1.5" + String(repeating: " ", count: StoredJSON<BeatPositions>.maximumTextBytes) + "]}"
        try library.write { db in
            try db.execute(sql: "UPDATE analyses SET candidates_json = ?, beats_json = ?, windows = zeroblob(?)",
                arguments: [candidates, beats, (PackedWindows.maximumWindows + 1) * PackedWindows.stride])
            try db.execute(sql: "UPDATE songs SET envelope = zeroblob(?), envelope_hop_s = 0.02", arguments: [4 * PackedEnvelope.maximumValues + 4])
        }
        let analyses = try library.analyses(of: Fixture.songID(0), windows: true)
        #expect(analyses.count == 3)
        for analysis in analyses {
            let read = analysis.record.analysis
            let none = read.candidates.isEmpty && read.windows.isEmpty && read.beats == nil
            #expect(none)
        }
        let envelope = try library.song(Fixture.songID(0))?.envelope
        #expect(envelope == nil)
        // Just within the bounds, the same values are read.
        try library.write { db in
            try db.execute(sql: "UPDATE analyses SET beats_json = '{\"times\":[1.5]}', windows = zeroblob(?)",
                arguments: [PackedWindows.maximumWindows * PackedWindows.stride])
            try db.execute(sql: "UPDATE songs SET envelope = zeroblob(?), envelope_hop_s = 0.02", arguments: [4 * PackedEnvelope.maximumValues])
        }
        let within = try library.analyses(of: Fixture.songID(0), windows: true)
        let read = within.allSatisfy { $0.record.analysis.windows.count == PackedWindows.maximumWindows && $0.record.analysis.beats?.times == [1.5] }
        #expect(read)
        #expect(try library.song(Fixture.songID(0))?.envelope?.values.count == PackedEnvelope.maximumValues)
        // A hop no analysis has, with a short envelope, reads as none too.
        try library.write { db in try db.execute(sql: "UPDATE songs SET envelope = zeroblob(8), envelope_hop_s = 1e-300") }
        #expect(try library.song(Fixture.songID(0))?.envelope == nil)
        // Text a little over the most an analysis keeps is cut to its strongest 32.
        let many = "[" + (0..<40).map { "{\"bpm\":\(100 + $0).0,\"strength\":0.5}" }.joined(separator: ",") + "]"
        try library.write { db in try db.execute(sql: "UPDATE analyses SET candidates_json = ?", arguments: [many]) }
        #expect(try library.analyses(of: Fixture.songID(0)).allSatisfy { $0.record.analysis.candidates.map(\.bpm) == (0..<32).map { 100 + Double($0) } })
    }

    @Test func aDateEditedByHandIsReadAsTheStartOf1970() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 1) { _ in (120, 120, 60) }
        try library.write { db in
            try db.execute(sql: "UPDATE analyses SET analyzed_at = 5")
            try db.execute(sql: "UPDATE songs SET added_at = 'yesterday'")
        }
        let analyses = try library.analyses(of: Fixture.songID(0))
        #expect(analyses.count == 3 && analyses.allSatisfy { $0.record.analyzedAt == Date(timeIntervalSince1970: 0) })
        #expect(try library.song(Fixture.songID(0))?.addedAt == Date(timeIntervalSince1970: 0))
        // The comparisons read the dates too (they stopped the process before).
        _ = try library.compareLibrary()
        _ = try library.compare(Fixture.songID(0))
    }
}
