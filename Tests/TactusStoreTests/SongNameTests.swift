import Foundation
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

/// One way to name a song: a SHA-256 or a prefix, a stored path (absolute, or below a root),
/// a stored file name when only one song has it; ambiguous names list their candidates.
@Suite struct SongNameTests {
    /// Songs 0 to 2, songs 1 and 2 both named `intro.mp3`, song 0 stored below a root.
    func library(_ directory: TemporaryDirectory) throws -> Library {
        let library = try Fixture.library(in: directory)
        for n in 0..<3 {
            var song = Fixture.song(n)
            if n > 0 { song.fileName = "intro.mp3" }
            try library.record(song, analyses: [Fixture.record("alpha", bpm: 120)])
        }
        try library.recordLocation(SongLocation(root: "/music", path: "Artist/Album/one.flac", byteSize: 1000, mtimeNs: 1), of: Fixture.songID(0))
        return library
    }

    @Test func namesAreIdsPrefixesStoredPathsAndFileNames() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let song0 = Fixture.songID(0)
        #expect(try library.resolveName(song0.hex) == (song0, "song-0.flac", .id))
        #expect(try library.resolveName(String(song0.hex.prefix(10))) == (song0, "song-0.flac", .prefix))
        #expect(try library.resolveName("song-0.flac") == (song0, "song-0.flac", .fileName))
        #expect(try library.resolveName("/music/Artist/Album/one.flac") == (song0, "song-0.flac", .path))
        #expect(try library.resolveName("Artist/Album/one.flac") == (song0, "song-0.flac", .path))
        #expect(throws: StoreError.unknownSong("/music/Artist/Album/two.flac")) { try library.resolveName("/music/Artist/Album/two.flac") }
        // The name of a file the song is stored at names it too (a song renamed on disk keeps
        // its first file name in `songs.file_name` unless a scan saw it move).
        #expect(try library.resolveName("one.flac") == (song0, "song-0.flac", .fileName))
        #expect(throws: StoreError.unknownSong("Album/two.flac")) { try library.resolveName("Album/two.flac") }
        #expect(throws: StoreError.unknownSong("two.flac")) { try library.resolveName("two.flac") }
        // A missing file's name no longer does; `ne.flac` is no file's name.
        try library.markMissing(root: "/music", path: "Artist/Album/one.flac")
        #expect(throws: StoreError.unknownSong("one.flac")) { try library.resolveName("one.flac") }
        #expect(throws: StoreError.unknownSong("ne.flac")) { try library.resolveName("ne.flac") }
    }

    /// A song moved by a scan (its old location removed while it has another) takes the new
    /// file's name, and is named by it.
    @Test func aMovedSongTakesItsNewFileName() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let song1 = Fixture.songID(1)
        try library.recordLocation(SongLocation(root: "/music", path: "old/intro.mp3", byteSize: 1000, mtimeNs: 1), of: song1)
        try library.recordLocation(SongLocation(root: "/music", path: "new/Renamed.mp3", byteSize: 1000, mtimeNs: 2), of: song1)
        try library.removeLocation(root: "/music", path: "old/intro.mp3")
        #expect(try library.song(song1)?.fileName == "Renamed.mp3")
        #expect(try library.resolveName("Renamed.mp3") == (song1, "Renamed.mp3", .fileName))
        // Song 2 is the only `intro.mp3` left.
        #expect(try library.resolveName("intro.mp3").song == Fixture.songID(2))
    }

    @Test func anAmbiguousFileNameListsItsSongs() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let expected = [Fixture.songID(1), Fixture.songID(2)].sorted().map { SongResolution.Candidate(song: $0, file: "intro.mp3") }
        #expect(throws: StoreError.ambiguousName("intro.mp3", candidates: expected)) { try library.resolveName("intro.mp3") }
        let message = StoreError.ambiguousName("intro.mp3", candidates: expected).description
        #expect(message.contains(expected[0].song.short) && message.contains(expected[1].song.short))
        let answer = SongResolution(name: "intro.mp3", error: .ambiguousName("intro.mp3", candidates: expected))
        #expect(answer.problem?.code == .ambiguous)
        #expect(answer.candidates == expected)
    }

    @Test func aFileHereIsHashed() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let bytes = Data("the bytes of a song".utf8)
        try bytes.write(to: URL(fileURLWithPath: directory.file("here.mp3")))
        var song = Fixture.song(7)
        song.id = SongID(hashing: bytes)
        try library.record(song, analyses: [])
        #expect(try library.resolve(directory.file("here.mp3")) == (song.id, "song-7.flac", .content))
        // Never by content for a server: the same text is not a stored name.
        #expect(throws: StoreError.unknownSong(directory.file("here.mp3"))) { try library.resolveName(directory.file("here.mp3")) }
    }
}
