import Foundation
import TactusAudio
import TactusModel
import TactusTestSupport
import Testing

/// Tags, bitrates and song identity.
@Suite struct MetadataTests {
    static let tags = AudioTags(title: "Café Ωmega — 東京", artist: "Björk", album: "Ünïcödé", genre: "Techno", year: 2021)

    @Test(arguments: [AudioFileWriter.Format.flac, .oggVorbis, .opus, .wav16, .mp3(.constant), .mp3(.variable)])
    func tagsRoundTripWithNonASCIIText(format: AudioFileWriter.Format) throws {
        let bytes = try AudioFileWriter(format, tags: Self.tags).encode(TestSignals.mono(seconds: 1, sampleRate: 48000), sampleRate: 48000)
        let stream = try AudioStream(.bytes(bytes, name: "tagged"))
        #expect(stream.metadata.tags == Self.tags)
    }

    @Test func aiffKeepsTitleAndArtist() throws {
        // libsndfile stores only these two in AIFF.
        let bytes = try AudioFileWriter(.aiff, tags: Self.tags).encode(TestSignals.mono(seconds: 1, sampleRate: 44100), sampleRate: 44100)
        let tags = try AudioStream(.bytes(bytes, name: "tagged.aiff")).metadata.tags
        #expect(tags.title == Self.tags.title)
        #expect(tags.artist == Self.tags.artist)
    }

    @Test func untaggedFilesHaveNoTags() throws {
        let bytes = try AudioFileWriter(.mp3(.constant)).encode(TestSignals.mono(seconds: 1, sampleRate: 44100), sampleRate: 44100)
        #expect(try AudioStream(.bytes(bytes, name: "plain.mp3")).metadata.tags.isEmpty)
    }

    @Test func invalidUTF8InTagsIsRepaired() throws {
        // A RIFF INFO title of Latin-1 bytes ("Caf\u{E9}"): not UTF-8, read as Latin-1.
        var bytes = try AudioFileWriter(.wav16, tags: AudioTags(title: "Cafe noir")).encode(TestSignals.mono(seconds: 1, sampleRate: 8000), sampleRate: 8000)
        let title = try #require(bytes.indices.first { bytes[$0..<$0 + 4].elementsEqual("Cafe".utf8) })
        bytes[title + 3] = 0xE9
        let tags = try AudioStream(.bytes(bytes, name: "latin1.wav")).metadata.tags
        #expect(tags.title == "Café noir")
    }

    /// ID3v2.3 frames in UTF-16 and Latin-1 before the audio, junk before the first frame, an
    /// APE tag and an ID3v1 tag after it: all skipped, and the tags read.
    @Test func id3AndApeTagsAreReadAndSkipped() throws {
        let signal = TestSignals.mono(seconds: 6, sampleRate: 44100)
        let audio = try AudioFileWriter(.mp3(.variable)).encode(signal, sampleRate: 44100)
        let plain = try DecodedAudio(decoding: .bytes(audio, name: "plain.mp3"))

        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
            let size = UInt32(body.count)
            return Array(id.utf8) + [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 0, 0] + body
        }
        let utf16Title: [UInt8] = [1, 0xFF, 0xFE] + "Nächte in 東京".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let latin1Artist: [UInt8] = [0] + Array("Mot".utf8) + [0xF6] + Array("rhead".utf8)
        let frames = frame("TIT2", utf16Title) + frame("TPE1", latin1Artist) + frame("TCON", [0] + Array("(17)".utf8))
        let size = frames.count
        let id3v2 = Array("ID3".utf8) + [3, 0, 0] + [3, 2, 1, 0].map { UInt8(size >> (7 * $0) & 0x7F) } + frames

        var generator = SeededGenerator(seed: 8)
        let junk = (0..<700).map { _ in UInt8(truncatingIfNeeded: generator.next() & 0x7F) }

        let apeItem = [5, 0, 0, 0, 0, 0, 0, 0] + Array("Title".utf8) + [0] + Array("Hello".utf8)
        func apeBlock(isHeader: Bool) -> [UInt8] {
            let size = UInt32(apeItem.count + 32)
            let flags: UInt32 = isHeader ? 0xA000_0000 : 0x8000_0000
            return Array("APETAGEX".utf8) + le(2000) + le(size) + le(1) + le(flags) + [UInt8](repeating: 0, count: 8)
        }
        func le(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
        let ape = apeBlock(isHeader: true) + apeItem + apeBlock(isHeader: false)

        func padded(_ text: [UInt8], _ length: Int) -> [UInt8] { text + [UInt8](repeating: 0, count: length - text.count) }
        let id3v1 = Array("TAG".utf8) + padded(Array("v1 title".utf8), 30) + padded(Array("v1 artist".utf8), 30)
            + padded(Array("Caf".utf8) + [0xE9] + Array(" Album".utf8), 30) + Array("1999".utf8) + padded([], 30) + [17]

        let tagged = try DecodedAudio(decoding: .bytes(id3v2 + junk + audio + ape + id3v1, name: "tagged.mp3"))
        #expect(tagged.metadata.tags == AudioTags(title: "Nächte in 東京", artist: "Motörhead", album: "Café Album", genre: "Rock", year: 1999))
        #expect(abs(tagged.samples.count - plain.samples.count) <= 1152)
        #expect(TestSignals.correlation(Array(plain.samples.prefix(200_000)), Array(tagged.samples.prefix(200_000))) > 0.99)
    }

    @Test func mp3ResynchronisesOverGarbageInTheMiddle() throws {
        let signal = TestSignals.mono(seconds: 8, sampleRate: 44100)
        let audio = try AudioFileWriter(.mp3(.constant)).encode(signal, sampleRate: 44100)
        var generator = SeededGenerator(seed: 12)
        let garbage = (0..<3000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let middle = audio.count / 2
        let damaged = Array(audio[..<middle]) + garbage + Array(audio[middle...])
        let decoded = try DecodedAudio(decoding: .bytes(damaged, name: "damaged.mp3"))
        #expect(abs(decoded.metadata.duration - 8) < 0.3)
    }

    @Test func bitratesAreReported() throws {
        let signal = TestSignals.mono(seconds: 6, sampleRate: 44100)
        let wav = try AudioStream(.bytes(try AudioFileWriter(.wav16).encode(signal, sampleRate: 44100), name: "a.wav"))
        #expect(wav.metadata.bitrate == 44100 * 16)
        let mp3 = try AudioStream(.bytes(try AudioFileWriter(.mp3(.constant), compressionLevel: 0.5).encode(signal, sampleRate: 44100), name: "a.mp3"))
        let bitrate = try #require(mp3.metadata.bitrate)
        #expect([32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320].map { $0 * 1000 }.contains(bitrate))
    }

    @Test func durationIsEstimatedThenExact() throws {
        let signal = TestSignals.mono(seconds: 6, sampleRate: 44100)
        let stream = try AudioStream(.bytes(try AudioFileWriter(.flac).encode(signal, sampleRate: 44100), name: "a.flac"))
        #expect(stream.metadata.durationIsExact == false)
        #expect(stream.metadata.duration == 6)
        #expect(stream.expectedFrames == signal[0].count)
        try stream.readToEnd()
        #expect(stream.metadata.durationIsExact)
        #expect(stream.metadata.duration == 6)
        #expect(stream.framesDecoded == signal[0].count)
    }

    @Test func songIdentityIsTheSHA256OfTheBytes() throws {
        #expect(try SongID(of: .bytes(Array("abc".utf8), name: "abc")).hex
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let directory = try TemporaryDirectory()
        let path = directory.file("song.flac")
        let bytes = try AudioFileWriter(.flac).encode(TestSignals.mono(seconds: 2, sampleRate: 44100), sampleRate: 44100)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fromPath = try SongID(of: .file(path)).hex
        #expect(fromPath == (try SongID(of: .bytes(bytes, name: "upload")).hex))
        #expect(fromPath.count == 64)
        #expect(fromPath == fromPath.lowercased())
        var changed = bytes
        changed[changed.count - 1] ^= 1
        #expect(fromPath != (try SongID(of: .bytes(changed, name: "other")).hex))
        // Larger than the 1 MiB hashing piece.
        let large = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let largePath = directory.file("large.bin")
        try Data(large).write(to: URL(fileURLWithPath: largePath))
        #expect(try SongID(of: .file(largePath)).hex == SongID(of: .bytes(large, name: "large")).hex)
    }
}
