import Foundation
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusServiceHost
import TactusTestSupport
import Testing

/// BPM tags read and written in real `tactus service-host` processes, through the descriptors
/// of a file and its folder opened here: the tag lands in the file (checked by mutagen), and a
/// name swapped for a link to a file elsewhere between the open and the write changes nothing.
@Suite(.enabled(if: Mutagen.isAvailable, "python3 cannot import mutagen (make deps installs python3-mutagen)"))
struct IsolatedTaggerTests {
    /// A folder holding `song.flac` (its bytes' SHA-256 `song`) and, elsewhere, `private.flac`: a
    /// copy of the same bytes, mode 0600.
    struct Files {
        let directory: TemporaryDirectory
        let path: String, outside: String
        let bytes: Data
        var song: SongID { SongID(hashing: bytes) }

        init() throws {
            directory = try TemporaryDirectory(prefix: "tactus-isolated-tags")
            let root = directory.file("root"), elsewhere = directory.file("elsewhere")
            for folder in [root, elsewhere] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            path = root + "/song.flac"
            outside = elsewhere + "/private.flac"
            try AudioFileWriter(.flac, tags: AudioTags(title: "Mine", artist: "Me"))
                .write([Synth.drumPattern(bpm: 120, seconds: 6, sampleRate: 22_050)], sampleRate: 22_050, to: path)
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try bytes.write(to: URL(fileURLWithPath: outside))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: outside)
        }
    }

    static func tagger() -> IsolatedTagger { IsolatedTagger(hosts: ServiceHostPoolTests.pool()) }

    @Test func aTagIsWrittenAndReadBackThroughTheDescriptors() throws {
        let files = try Files()
        let tagger = Self.tagger()
        let entry = try LibraryRoots.openEntry(atPath: files.path)
        let order = TagWriteOrder(bpm: 127.94, song: files.song, dryRun: false, backup: true)
        let written = try tagger.writeTag(order, into: entry.descriptors)
        withExtendedLifetime(entry) {}
        #expect(written.fields == [TagField(name: "BPM", value: "127.9")])
        #expect(written.backup == files.path + ".bak")
        #expect(try Mutagen.tags(of: files.path)["BPM"] == ["127.9"])
        #expect(try Mutagen.tags(of: files.path)["TITLE"] == ["Mine"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: files.path + ".bak")) == files.bytes)
        let now = try Data(contentsOf: URL(fileURLWithPath: files.path))
        let status = try FileManager.default.attributesOfItem(atPath: files.path)
        let rewritten = try #require(written.rewritten)
        #expect(rewritten.song == SongID(hashing: now) && rewritten.byteSize == now.count)
        #expect(rewritten.mtimeNs / 1_000_000_000 == Int64((status[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0))

        let again = try LibraryRoots.openEntry(atPath: files.path)
        let read = try tagger.readTag(of: again.descriptors)
        withExtendedLifetime(again) {}
        #expect(read == TagFileRead(song: rewritten.song, tag: "127.9"))
        // The file is no longer the song the order names: skipped, untouched.
        let stale = try LibraryRoots.openEntry(atPath: files.path)
        let problem = #expect(throws: TagFileProblem.self) { try tagger.writeTag(order, into: stale.descriptors) }
        withExtendedLifetime(stale) {}
        #expect(problem?.skipped == true && problem?.reason.contains("no longer song \(files.song.short)") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: files.path)) == now)
    }

    @Test func aNameSwappedForALinkBeforeTheWriteChangesNothingOutside() throws {
        let files = try Files()
        let entry = try LibraryRoots.openEntry(atPath: files.path)
        let moved = files.directory.file("root/moved.flac")
        try FileManager.default.moveItem(atPath: files.path, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: files.path, withDestinationPath: files.outside)

        let order = TagWriteOrder(bpm: 128, song: files.song, dryRun: false, backup: false)
        let problem = #expect(throws: TagFileProblem.self) { try Self.tagger().writeTag(order, into: entry.descriptors) }
        withExtendedLifetime(entry) {}
        #expect(problem?.skipped == false && problem?.code == "changed-while-written", "\(String(describing: problem))")
        #expect(problem?.reason.hasPrefix(files.path + ": the file changed while it was written") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: files.outside)) == files.bytes)
        #expect(try FileManager.default.attributesOfItem(atPath: files.outside)[.posixPermissions] as? Int == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == files.bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: files.directory.file("root")).sorted() == ["moved.flac", "song.flac"])
    }
}
