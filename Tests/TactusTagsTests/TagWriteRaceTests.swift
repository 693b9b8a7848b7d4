import Foundation
import TactusLibraryRoots
import TactusModel
import TactusTags
import TactusTestSupport
import Testing

/// A song's name swapped for a symbolic link to a private file elsewhere after the file was
/// opened and before its tag is written (the race of issue 27): the write works on the
/// descriptors opened first, checks the name before the rename, and never touches the file the
/// link leads to.
@Suite(.enabled(if: Mutagen.isAvailable, "python3 cannot import mutagen (make deps installs python3-mutagen)"))
struct TagWriteRaceTests {
    /// The private file, the moved song and the folder are as they were: nothing written anywhere.
    static func expectUntouched(_ swap: LinkSwap) throws {
        #expect(try swap.outsideIsUntouched())
        #expect(try Mutagen.tags(of: swap.outside)["BPM"] == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: swap.moved)) == swap.bytes)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: swap.song) == swap.outside)
        #expect(try swap.namesInRoot() == ["moved-song.flac", "song.flac"], "no copy or backup is left")
    }

    @Test(arguments: [false, true])
    func aNameSwappedForALinkWhileTheTagIsWrittenIsRefusedAndNothingIsTouched(backup: Bool) throws {
        let swap = try LinkSwap()
        let entry = try LibraryRoots.openEntry(atPath: swap.song)
        try swap.swapForLink()
        #expect(throws: TagError.changedWhileWritten(path: swap.song)) {
            try SafeTagWriter(keepsBackup: backup).write(bpm: 128, to: entry.descriptors)
        }
        withExtendedLifetime(entry) {}
        try Self.expectUntouched(swap)
    }

    @Test func theLinkItselfIsNeverOpened() throws {
        let swap = try LinkSwap()
        try swap.swapForLink()
        let error = #expect(throws: LibraryRootsError.self) { try LibraryRoots.openEntry(atPath: swap.song) }
        #expect(error?.problem == .symbolicLink(component: "song.flac") && error?.code == .forbidden)
        #expect(error?.description.hasPrefix("\(swap.song): song.flac is a symbolic link") == true, "\(String(describing: error))")
        try Self.expectUntouched(swap)
    }

    @Test func aWriteKeepsTheModeOfTheFileReadNotOfItsName() throws {
        let swap = try LinkSwap()
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
