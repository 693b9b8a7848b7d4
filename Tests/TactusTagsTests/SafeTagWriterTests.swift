import Foundation
import TactusAudio
import TactusLibraryRoots
import TactusModel
import TactusTags
import TactusTestSupport
import Testing

/// BPM tags written by TagLib through ``SafeTagWriter`` and read back by mutagen: the tempo
/// lands where each format keeps it, the other tags and the audio stay as they were.
@Suite(.enabled(if: Mutagen.isAvailable, "python3 cannot import mutagen (make deps installs python3-mutagen)"))
struct SafeTagWriterTests {
    static let tags = AudioTags(title: "Steady Steps", artist: "The Metronomes")

    /// A 6-second drum pattern with a title and an artist.
    static func song(_ format: AudioFileWriter.Format, named name: String, in directory: TemporaryDirectory) throws -> String {
        let path = directory.file(name)
        let rate = format == .opus ? 48_000 : 44_100
        let signal = Synth.drumPattern(bpm: 128, seconds: 6, sampleRate: Double(rate))
        try AudioFileWriter(format, tags: tags).write([signal], sampleRate: rate, to: path)
        return path
    }

    static func samples(_ path: String) throws -> [Float] {
        try DecodedAudio(decoding: .file(path), options: DecodingOptions(minimumSeconds: 0)).samples
    }

    /// `body` on the file at `path` opened with its folder, as the taggers open it.
    static func opened<T>(_ path: String, _ body: (OpenFileInFolder) throws -> T) throws -> T {
        let entry = try LibraryRoots.openEntry(atPath: path)
        return try withExtendedLifetime(entry) { try body(entry.descriptors) }
    }

    /// Writes `bpm` into the file at `path` through its descriptors.
    static func write(_ bpm: Double, to path: String, backup: Bool = false) throws -> SafeTagWriter.Written {
        try opened(path) { try SafeTagWriter(keepsBackup: backup).write(bpm: bpm, to: $0) }
    }

    static func read(_ path: String) throws -> FileTags {
        try opened(path) { try TagFile.read($0) }
    }

    @Test(arguments: [
        (AudioFileWriter.Format.mp3(.variable), "song.mp3", ["TBPM": ["128"], "TXXX:BPM": ["127.9"]]),
        (.flac, "song.flac", ["BPM": ["127.9"]]),
        (.oggVorbis, "song.ogg", ["BPM": ["127.9"]]),
        (.opus, "song.opus", ["BPM": ["127.9"]]),
    ])
    func theTempoIsWrittenWhereTheFormatKeepsItAndNothingElseChanges(
        format: AudioFileWriter.Format, name: String, expected: [String: [String]]
    ) throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags")
        let path = try Self.song(format, named: name, in: directory)
        let before = try Mutagen.tags(of: path), audio = try Self.samples(path)
        #expect(before.values.contains(["Steady Steps"]), "libsndfile wrote the title: \(before)")

        let written = try Self.write(127.94, to: path)
        #expect(written.backup == nil)
        #expect(Dictionary(uniqueKeysWithValues: written.fields.map { ($0.name, [$0.value]) }) == expected)

        let after = try Mutagen.tags(of: path)
        for (key, value) in expected { #expect(after[key] == value, "\(key) in \(after)") }
        // Every tag that was there is still there, unchanged; only the BPM fields were added.
        for (key, value) in before { #expect(after[key] == value, "\(key) in \(after)") }
        #expect(Set(after.keys).subtracting(before.keys) == Set(expected.keys))
        #expect(try Self.samples(path) == audio)
        #expect(try Self.read(path).bpm == 127.9)
        #expect(try Self.read(path).title == "Steady Steps")
        // No temporary copy is left in the folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [name])
    }

    @Test func aTagWrittenByAnotherProgramIsRead() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags")
        let mp3 = try Self.song(.mp3(.constant), named: "tagged.mp3", in: directory)
        let flac = try Self.song(.flac, named: "tagged.flac", in: directory)
        try Mutagen.setBPM("141", in: mp3)
        try Mutagen.setBPM("98.5", in: flac)
        #expect(try Self.read(mp3).bpmText == "141")
        #expect(try Self.read(mp3).bpm == 141)
        #expect(try Self.read(mp3).artist == "The Metronomes")
        #expect(try Self.read(flac).bpm == 98.5)
        #expect(try Self.read(Self.song(.flac, named: "untagged.flac", in: directory)).bpmText == nil)
        try Mutagen.setBPM("fast", in: flac)
        #expect(try Self.read(flac).bpmText == "fast")
        #expect(try Self.read(flac).bpm == nil)
    }

    @Test func anExistingID3v2TagKeepsItsVersionAndItsFrames() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags")
        let path = try Self.song(.mp3(.constant), named: "song.mp3", in: directory)
        // mutagen moves the ID3v1 fields into an ID3v2.3 tag, with a comment TagLib has no property for.
        let tagged = try CLI.python([
            "-c",
            """
            import sys
            from mutagen.id3 import ID3, COMM, TBPM
            tags = ID3(sys.argv[1])
            tags.add(COMM(encoding=3, lang="eng", desc="note", text=["kept as it is"]))
            tags.add(TBPM(encoding=0, text=["64"]))
            tags.save(sys.argv[1], v2_version=3)
            """,
            path,
        ])
        #expect(tagged.status == 0, "\(tagged.standardError)")
        let before = try Mutagen.tags(of: path)
        _ = try Self.write(132.26, to: path)
        let after = try Mutagen.tags(of: path)
        #expect(after["TBPM"] == ["132"])
        #expect(after["TXXX:BPM"] == ["132.3"])
        #expect(after["COMM:NOTE:ENG"] == ["kept as it is"])
        for (key, value) in before where key != "TBPM" { #expect(after[key] == value, "\(key) in \(after)") }
        let version = try CLI.python(["-c", "import sys; from mutagen.id3 import ID3; print(ID3(sys.argv[1]).version)", path])
        #expect(version.standardOutput == "(2, 3, 0)\n")
    }

    @Test func theBackupKeepsTheOriginalBytesAndIsNeverOverwritten() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags")
        let path = try Self.song(.flac, named: "song.flac", in: directory)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let written = try Self.write(90, to: path, backup: true)
        #expect(written.backup == path + ".bak")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".bak")) == original)
        #expect(try Mutagen.tags(of: path)["BPM"] == ["90.0"])

        let tagged = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: TagError.writeFailed(path: path, reason: "the backup \(path).bak already exists")) {
            try Self.write(91, to: path, backup: true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == tagged)
    }

    /// A file whose bytes are another format than its name says is neither written nor read:
    /// TagLib takes a FLAC or Ogg file named `.mp3` for MP3 (and would put an ID3v2 tag in front
    /// of it), and players go by the name. The error names the file and both formats; the bytes
    /// stay as they were.
    @Test(arguments: [
        (AudioFileWriter.Format.flac, "flac.mp3", TagFormat.mp3, TagFormat.flac),
        (.oggVorbis, "vorbis.MP3", .mp3, .oggVorbis),
        (.oggVorbis, "vorbis.flac", .flac, .oggVorbis),
        (.flac, "flac.ogg", .oggVorbis, .flac),
        (.mp3(.variable), "mp3.flac", .flac, .mp3),
        (.wav16, "wave.opus", .opus, .other),
    ])
    func aFileWhoseBytesAreAnotherFormatIsNeitherWrittenNorRead(
        format: AudioFileWriter.Format, name: String, named: TagFormat, content: TagFormat
    ) throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags")
        let path = try Self.song(format, named: name, in: directory)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let expected = TagError.misnamed(path: path, named: named, content: content)
        #expect(throws: expected) { try Self.write(120, to: path) }
        #expect(throws: expected) { try Self.read(path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(expected.description.hasPrefix(path + ": its name says "))
        #expect(expected.code == .unsupportedFormat)
    }

    @Test func badFilesAreRefusedWithAnErrorNamingThem() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags")
        let missing = directory.file("missing.mp3")
        let gone = #expect(throws: LibraryRootsError.self) { try Self.write(120, to: missing) }
        #expect(gone?.problem == .notFound && gone?.description.hasPrefix(missing + ": ") == true)

        let wav = try Self.song(.wav16, named: "song.wav", in: directory)
        #expect(throws: TagError.unsupportedFormat(path: wav, format: .other)) { try Self.write(120, to: wav) }

        let text = directory.file("notes.mp3")
        #expect(FileManager.default.createFile(atPath: text, contents: Data(String(repeating: "not audio\n", count: 500).utf8)))
        let notAudio = #expect(throws: TagError.self) { try Self.write(120, to: text) }
        #expect(notAudio?.path == text)
        #expect(notAudio?.description.hasPrefix(text + ": ") == true)
        #expect(try String(contentsOfFile: text, encoding: .utf8).hasPrefix("not audio"))

        let readOnly = try Self.song(.flac, named: "read-only.flac", in: directory)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: readOnly)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: readOnly))
        #expect(throws: TagError.readOnly(path: readOnly)) { try Self.write(120, to: readOnly) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: readOnly)) == bytes)
        #expect(TagError.readOnly(path: readOnly).description == "\(readOnly): the file is read-only")
    }
}
