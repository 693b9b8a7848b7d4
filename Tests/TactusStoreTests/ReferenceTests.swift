import Foundation
import GRDB
import TactusAudio
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct ReferenceTests {
    @Test func setsAndReplacesAReferenceByHand() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [])
        try library.setReference(128, for: Fixture.songID(1))
        try library.setReference(64, for: Fixture.songID(1), source: "tag")
        let reference = try #require(try library.reference(for: Fixture.songID(1)))
        #expect(reference.bpm == 64)
        #expect(reference.source == "tag")
        #expect(try library.counts().references == 1)
        #expect(throws: StoreError.bpmOutOfRange(field: "bpm", value: 1000.5)) {
            try library.setReference(1000.5, for: Fixture.songID(1))
        }
        #expect(throws: StoreError.unknownSong(Fixture.songID(2).hex)) {
            try library.setReference(100, for: Fixture.songID(2))
        }
        #expect(try library.reference(for: Fixture.songID(1))?.bpm == 64)
    }

    /// A server's `truth-import`: many songs' tempi in one transaction; an unknown song (or a
    /// tempo out of range) anywhere sets none of them.
    @Test func setsManyReferencesAllOrNothing() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(Fixture.song(1), analyses: [])
        try library.record(Fixture.song(2), analyses: [])
        #expect(try library.setReferences([(Fixture.songID(1), 100), (Fixture.songID(2), 140), (Fixture.songID(1), 101)], source: "csv:a.csv") == 3)
        #expect(try library.reference(for: Fixture.songID(1))?.bpm == 101)
        #expect(try library.reference(for: Fixture.songID(2))?.source == "csv:a.csv")
        #expect(throws: StoreError.unknownSong(Fixture.songID(3).hex)) {
            try library.setReferences([(Fixture.songID(1), 90), (Fixture.songID(3), 90)], source: "csv:b.csv")
        }
        #expect(throws: StoreError.bpmOutOfRange(field: "bpm", value: 0.5)) {
            try library.setReferences([(Fixture.songID(2), 90), (Fixture.songID(1), 0.5)], source: "csv:b.csv")
        }
        #expect(try library.reference(for: Fixture.songID(1))?.bpm == 101)
        #expect(try library.reference(for: Fixture.songID(2))?.bpm == 140)
    }

    @Test func importsACSVBySongOrByFile() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record((0..<3).map { SongAnalyses(song: Fixture.song($0), analyses: []) })
        let ids = (0..<3).map(Fixture.songID)
        try write(
            "title,song,bpm\n\"Song, the first\",\(ids[0].hex),120.5\r\nsecond,\(ids[1].hex.prefix(10).uppercased()),99\n\n",
            to: directory.file("by-song.csv"))
        #expect(try library.importReferences(csvAt: directory.file("by-song.csv")) == 2)
        #expect(try library.reference(for: ids[0])?.bpm == 120.5)
        #expect(try library.reference(for: ids[1])?.bpm == 99)
        #expect(try library.reference(for: ids[1])?.source == "csv:by-song.csv")

        // A real audio file next to the CSV is hashed; a name that is no file is a song's file name.
        let audio = Data((0..<5000).map { UInt8($0 % 251) })
        try audio.write(to: URL(fileURLWithPath: directory.file("track.wav")))
        var song = Fixture.song(50)
        song.id = SongID(hashing: audio)
        song.fileName = "renamed.wav"
        try library.record(song, analyses: [])
        try write("file,bpm\ntrack.wav,140\nsong-2.flac,87\n", to: directory.file("by-file.csv"))
        #expect(try library.importReferences(csvAt: directory.file("by-file.csv")) == 2)
        #expect(try library.reference(for: song.id)?.bpm == 140)
        #expect(try library.reference(for: ids[2])?.bpm == 87)
    }

    @Test(arguments: [
        ("song,bpm\nSONG0,120\nSONG1,abc\n", 3, "bpm 'abc' is not a tempo in 1...1000"),
        ("song,bpm\nSONG0,120\nSONG1,0\n", 3, "bpm '0' is not a tempo in 1...1000"),
        ("song,bpm\nSONG0,120\nSONG1,1000.1\n", 3, "bpm '1000.1' is not a tempo in 1...1000"),
        ("song,bpm\nSONG0,120\nSONG1\n", 3, "1 fields where the header has 2"),
        ("song,bpm\nSONG0,120\nabcdef,120\n", 3, "song 'abcdef' is not a SHA-256 or a prefix of at least 8 hex digits"),
        ("song,bpm\nSONG0,120\n0000000000000000,120\n", 3, "no song in the library matches '0000000000000000'"),
        ("song,bpm\nSONG0,120\n\"SONG1,120\n", 3, "an unterminated quote"),
        ("file,bpm\nsong-0.flac,120\nnowhere.mp3,120\n", 3,
         "'nowhere.mp3' is neither a file nor the file name of a song in the library"),
        ("title,bpm\nx,120\n", 1, "the header needs exactly one of the columns song and file"),
        ("song,tempo\nSONG0,120\n", 1, "the header has no bpm column"),
        ("", 1, "empty file; expected a header with bpm and song or file"),
    ])
    func aMalformedLineRejectsTheWholeFile(_ text: String, _ line: Int, _ reason: String) throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record((0..<2).map { SongAnalyses(song: Fixture.song($0), analyses: []) })
        try library.setReference(77, for: Fixture.songID(0))
        let csv = text.replacingOccurrences(of: "SONG0", with: Fixture.songID(0).hex)
            .replacingOccurrences(of: "SONG1", with: Fixture.songID(1).hex)
        try write(csv, to: directory.file("truth.csv"))
        #expect(throws: StoreError.malformedCSV(file: "truth.csv", line: line, reason: reason)) {
            try library.importReferences(csvAt: directory.file("truth.csv"))
        }
        // Line 2 was valid, yet nothing changed.
        #expect(try library.reference(for: Fixture.songID(0))?.bpm == 77)
        #expect(try library.reference(for: Fixture.songID(1)) == nil)
    }

    @Test func aMissingCSVIsAnError() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        #expect(throws: StoreError.unreadableFile(path: directory.file("none.csv"), reason: "not a readable UTF-8 text file")) {
            try library.importReferences(csvAt: directory.file("none.csv"))
        }
    }

    func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }
}

@Suite struct ResolveTests {
    @Test func resolvesFullIdsPrefixesAndFiles() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let twins = ["abcdef01" + String(repeating: "0", count: 56), "abcdef01" + String(repeating: "1", count: 56)]
        for (n, hex) in twins.enumerated() {
            var song = Fixture.song(n)
            song.id = try #require(SongID(hex))
            try library.record(song, analyses: [])
        }
        let audio = Data("RIFF but not really a wave file".utf8)
        try audio.write(to: URL(fileURLWithPath: directory.file("a song.wav")))
        var song = Fixture.song(9)
        song.id = SongID(hashing: audio)
        try library.record(song, analyses: [])

        #expect(try library.resolveSong(twins[0].uppercased()).hex == twins[0])
        #expect(try library.resolveSong("abcdef011").hex == twins[1])
        #expect(try library.resolveSong(song.id.hex.prefix(8).description) == song.id)
        #expect(try library.resolveSong(directory.file("a song.wav")) == song.id)
        #expect(throws: StoreError.ambiguousSong(prefix: "abcdef01", matches: 2)) { try library.resolveSong("abcdef01") }
        #expect(throws: StoreError.invalidSongName(
            "abcdef0", reason: "not a stored path or file name, and a SHA-256 prefix needs at least 8 hex digits")) {
            try library.resolveSong("abcdef0")
        }
        #expect(throws: StoreError.unknownSong("no-such-file.mp3")) { try library.resolveSong("no-such-file.mp3") }
        #expect(throws: StoreError.unknownSong("12345678")) { try library.resolveSong("12345678") }
        try Data("other bytes".utf8).write(to: URL(fileURLWithPath: directory.file("other.wav")))
        #expect(throws: StoreError.unknownSong(directory.file("other.wav"))) {
            try library.resolveSong(directory.file("other.wav"))
        }
    }

    @Test func hashesLargeFilesInBlocks() throws {
        let directory = try TemporaryDirectory()
        // 3.5 MiB: several blocks of 1 MiB and a partial one.
        let bytes = Data((0..<(3 << 20) + (1 << 19)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try bytes.write(to: URL(fileURLWithPath: directory.file("big.bin")))
        #expect(try SongID(of: .file(directory.file("big.bin"))) == SongID(hashing: bytes))
        #expect(throws: AudioError.self) { try SongID(of: .file(directory.file("missing.bin"))) }
    }
}
