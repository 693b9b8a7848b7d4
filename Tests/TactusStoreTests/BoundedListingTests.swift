import Foundation
import GRDB
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
