import Foundation
import TactusModel
import TactusStore
import TactusTestSupport
import Testing

/// `Library.songRewritten`: a song whose file got new bytes but kept its audio (a tag written)
/// takes the new SHA-256 with everything the library knew of it.
@Suite struct SongRewrittenTests {
    @Test func theSongTakesTheNewHashWithItsAnalysesAndReference() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [Fixture.record("comb-filter", bpm: 128)])
        try library.record(Fixture.song(2), analyses: [])
        try library.setReference(127, for: Fixture.songID(1), source: "tag")
        let new = SongID(hashing: Data("song 1, tagged".utf8))

        try library.songRewritten(Fixture.songID(1), as: new, byteSize: 4_321)
        #expect(try library.song(Fixture.songID(1)) == nil)
        let song = try #require(try library.song(new))
        #expect(song.byteSize == 4_321)
        #expect(song.fileName == Fixture.song(1).fileName)
        #expect(try library.analyses(of: new).map(\.record.analysis.bpm) == [128])
        #expect(try library.consensus(of: new)?.bpm == 128)
        #expect(try library.reference(for: new)?.bpm == 127)
        #expect(try library.counts().songs == 2)

        #expect(throws: StoreError.unknownSong(Fixture.songID(1).hex)) {
            try library.songRewritten(Fixture.songID(1), as: Fixture.songID(3), byteSize: 1)
        }
        #expect(throws: StoreError.invalidValue(field: "sha256", value: new.hex, accepted: "a song not yet in the library")) {
            try library.songRewritten(Fixture.songID(2), as: new, byteSize: 1)
        }
        #expect(try library.song(Fixture.songID(2)) != nil)
    }

    /// One file of a song with two was rewritten: in the same transaction as the rename, both
    /// files' times are distrusted, so a scan hashes them again (the other copy still holds the
    /// old bytes) even if the caller stops before recording the rewritten one.
    @Test func theSongsFilesAreReadAgainByTheNextScan() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [Fixture.record("comb-filter", bpm: 128)])
        for path in ["a.flac", "copy/a.flac"] {
            try library.recordLocation(SongLocation(root: "/music", path: path, byteSize: 1000, mtimeNs: 7), of: Fixture.songID(1))
        }
        let new = SongID(hashing: Data("song 1, tagged".utf8))
        try library.songRewritten(Fixture.songID(1), as: new, byteSize: 1_200)
        let locations = try library.locations(of: new)
        #expect(locations.map(\.path).sorted() == ["a.flac", "copy/a.flac"])
        #expect(locations.allSatisfy { $0.mtimeNs == Int64.min }, "\(locations)")
    }
}
