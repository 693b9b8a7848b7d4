import Foundation
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusTags
import TactusTestSupport
import Testing

/// A song's name swapped for a symbolic link to a file elsewhere after the file was opened and
/// before its tag is written (the race of issue 27): the write works on the descriptors opened
/// first, checks the name before the rename, and never touches the file the link leads to.
@Suite(.enabled(if: Mutagen.isAvailable, "python3 cannot import mutagen (make deps installs python3-mutagen)"))
struct TagWriteRaceTests {
    /// A library root holding `song.flac`, and outside it a private copy (mode 0600) of the same
    /// bytes: every check of content would pass on it, only the name check stands in the way.
    struct Swap {
        let directory: TemporaryDirectory
        let song: String, moved: String, outside: String
        let bytes: Data

        init() throws {
            directory = try TemporaryDirectory(prefix: "tactus-tag-race")
            let root = directory.file("root"), elsewhere = directory.file("elsewhere")
            for folder in [root, elsewhere] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            song = root + "/song.flac"
            moved = root + "/moved.flac"
            outside = elsewhere + "/private.flac"
            try AudioFileWriter(.flac, tags: AudioTags(title: "Mine", artist: "Me"))
                .write([Synth.drumPattern(bpm: 120, seconds: 6, sampleRate: 22_050)], sampleRate: 22_050, to: song)
            bytes = try Data(contentsOf: URL(fileURLWithPath: song))
            try bytes.write(to: URL(fileURLWithPath: outside))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: outside)
        }

        /// Moves the song aside and puts a link to the outside file in its place.
        func swapForLink() throws {
            try FileManager.default.moveItem(atPath: song, toPath: moved)
            try FileManager.default.createSymbolicLink(atPath: song, withDestinationPath: outside)
        }

        /// The outside file, the moved song and the root are as they were: nothing written anywhere.
        func expectUntouched() throws {
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == bytes)
            #expect(try FileManager.default.attributesOfItem(atPath: outside)[.posixPermissions] as? Int == 0o600)
            #expect(try Mutagen.tags(of: outside)["BPM"] == nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == bytes)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: song) == outside)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.file("root")).sorted()
            #expect(names == ["moved.flac", "song.flac"], "no copy or backup is left: \(names)")
        }
    }

    @Test(arguments: [false, true])
    func aNameSwappedForALinkWhileTheTagIsWrittenIsRefusedAndNothingIsTouched(backup: Bool) throws {
        let swap = try Swap()
        let entry = try LibraryRoots.openEntry(atPath: swap.song)
        try swap.swapForLink()
        #expect(throws: TagError.changedWhileWritten(path: swap.song)) {
            try SafeTagWriter(keepsBackup: backup).write(bpm: 128, to: entry.descriptors)
        }
        withExtendedLifetime(entry) {}
        try swap.expectUntouched()
    }

    @Test func theLinkItselfIsNeverOpened() throws {
        let swap = try Swap()
        try swap.swapForLink()
        let error = #expect(throws: ErrorBody.self) { try LibraryRoots.openEntry(atPath: swap.song) }
        #expect(error?.code == .forbidden)
        #expect(error?.message.hasPrefix("\(swap.song): song.flac is a symbolic link") == true, "\(String(describing: error))")
        try swap.expectUntouched()
    }

    @Test func aWriteKeepsTheModeOfTheFileReadNotOfItsName() throws {
        let swap = try Swap()
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: swap.song)
        let entry = try LibraryRoots.openEntry(atPath: swap.song)
        let written = try SafeTagWriter().write(bpm: 128, to: entry.descriptors)
        withExtendedLifetime(entry) {}
        #expect(try FileManager.default.attributesOfItem(atPath: swap.song)[.posixPermissions] as? Int == 0o640)
        #expect(try Mutagen.tags(of: swap.song)["BPM"] == ["128.0"])
        let now = try Data(contentsOf: URL(fileURLWithPath: swap.song))
        #expect(written.song == SongID(hashing: now) && written.byteSize == now.count)
    }
}
