import Foundation
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// Exports read the library a page at a time in tempo order while a scan may add songs and
/// songs may be analysed again: each song present throughout comes exactly once.
@Suite struct TempoOrderPagingTests {

    func add(_ n: Int, bpm: Double, to library: Library) throws {
        _ = try library.record(Fixture.song(n), analyses: [Fixture.record("a", bpm: bpm)])
    }

    @Test func songsAddedAndMovedBetweenPagesNeitherRepeatNorPushOthersOut() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        // Songs 0...11 at 100...111 BPM, and songs 20...23 all at exactly 105 (ties across a page end).
        for n in 0..<12 { try add(n, bpm: 100 + Double(n), to: library) }
        for n in 20..<24 { try add(n, bpm: 105, to: library) }
        var paging = TempoOrderPaging(from: 90, pageSize: 3)
        var pages = 0
        while !paging.isComplete {
            paging.take(try library.query(
                TempoQuery(range: paging.lower...200, source: .consensus, order: .bpm, limit: 3, offset: paging.skip)))
            pages += 1
            // Between pages, as a scan would: a song below what was read (offset paging would
            // then give the last song again), a song above it, and, after the third page, song
            // 1 (read) analysed again at 150 and song 10 (not read yet) removed from view by
            // an analysis at 60 (offset paging would then skip an unread song).
            try add(100 + pages, bpm: 95 + Double(pages) / 10, to: library)
            if pages == 1 { try add(200, bpm: 130, to: library) }
            if pages == 3 {
                try add(1, bpm: 150, to: library)
                try add(10, bpm: 60, to: library)
            }
            try #require(pages < 50, "the paging ends")
        }
        let ids = paging.songs.map(\.song)
        #expect(ids.count == Set(ids).count, "each song once")
        let expected = Set((0..<12).filter { $0 != 10 }.map(Fixture.songID) + (20..<24).map(Fixture.songID) + [Fixture.songID(200)])
        #expect(Set(ids) == expected)
        #expect(paging.songs.map(\.bpm) == paging.songs.map(\.bpm).sorted(), "in tempo order")
    }

    @Test func aServerThatAnswersEveryPageAlikeEndsThePaging() {
        let page = (0..<3).map { n in
            TempoMatch(
                song: Fixture.songID(n), bpm: 120, factor: 1, detector: "consensus", detectors: ["a"], title: nil, artist: nil,
                file: "song-\(n).flac", durationS: 180, confidence: nil, paths: [], beatGrid: nil)
        }
        var paging = TempoOrderPaging(from: 60, pageSize: 3)
        for _ in 0..<3 where !paging.isComplete { paging.take(page) }
        #expect(paging.isComplete)
        #expect(paging.songs.count == 3)
    }

    /// A page too large to carry is asked again at half the size, down to one song, and the
    /// paging goes on from where it was: every song once.
    @Test func halvedPagesReadEverySongOnce() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        for n in 0..<10 { try add(n, bpm: 100 + Double(n / 3), to: library) }
        var paging = TempoOrderPaging(from: 90, pageSize: 8)
        var refused = 0
        while !paging.isComplete {
            // A "reply" of more than 3 songs is too large: the page is halved until it fits.
            guard paging.pageSize <= 3 else {
                refused += 1
                let halved = paging.halvePage()
                try #require(halved)
                continue
            }
            paging.take(try library.query(
                TempoQuery(range: paging.lower...200, source: .consensus, order: .bpm, limit: paging.pageSize, offset: paging.skip)))
        }
        #expect(refused == 2 && paging.pageSize == 2)
        #expect(Set(paging.songs.map(\.song)) == Set((0..<10).map(Fixture.songID)) && paging.songs.count == 10)
        var single = TempoOrderPaging(from: 90, pageSize: 1)
        let halved = single.halvePage()
        #expect(!halved, "a page of one song is not halved")
    }
}
