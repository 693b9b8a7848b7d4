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
    static func tagger() -> IsolatedTagger { IsolatedTagger(hosts: ServiceHostPoolTests.pool()) }

    @Test func aTagIsWrittenAndReadBackThroughTheDescriptors() throws {
        let swap = try LinkSwap()
        let tagger = Self.tagger()
        let entry = try LibraryRoots.openEntry(atPath: swap.song)
        let order = TagWriteOrder(bpm: 127.94, song: SongID(hashing: swap.bytes), dryRun: false, backup: true)
        let written = try tagger.writeTag(order, into: entry.descriptors)
        withExtendedLifetime(entry) {}
        #expect(written.fields == [TagField(name: "BPM", value: "127.9")])
        #expect(written.backup == swap.song + ".bak")
        #expect(try Mutagen.tags(of: swap.song)["BPM"] == ["127.9"])
        #expect(try Mutagen.tags(of: swap.song)["TITLE"] == ["Mine"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: swap.song + ".bak")) == swap.bytes)
        let now = try Data(contentsOf: URL(fileURLWithPath: swap.song))
        let status = try FileManager.default.attributesOfItem(atPath: swap.song)
        let rewritten = try #require(written.rewritten)
        #expect(rewritten.song == SongID(hashing: now) && rewritten.byteSize == now.count)
        #expect(rewritten.mtimeNs / 1_000_000_000 == Int64((status[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0))

        let again = try LibraryRoots.openEntry(atPath: swap.song)
        let read = try tagger.readTag(of: again.descriptors)
        withExtendedLifetime(again) {}
        #expect(read == TagFileRead(song: rewritten.song, tag: "127.9"))
        // The file is no longer the song the order names: skipped, untouched.
        let stale = try LibraryRoots.openEntry(atPath: swap.song)
        let problem = #expect(throws: TagFileProblem.self) { try tagger.writeTag(order, into: stale.descriptors) }
        withExtendedLifetime(stale) {}
        #expect(problem?.skipped == true && problem?.reason.contains("no longer song \(SongID(hashing: swap.bytes).short)") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: swap.song)) == now)
    }

    @Test func aNameSwappedForALinkBeforeTheWriteChangesNothingOutside() throws {
        let swap = try LinkSwap()
        let entry = try LibraryRoots.openEntry(atPath: swap.song)
        try swap.swapForLink()

        let order = TagWriteOrder(bpm: 128, song: SongID(hashing: swap.bytes), dryRun: false, backup: false)
        let problem = #expect(throws: TagFileProblem.self) { try Self.tagger().writeTag(order, into: entry.descriptors) }
        withExtendedLifetime(entry) {}
        #expect(problem?.skipped == false && problem?.code?.rawValue == "changed-while-written", "\(String(describing: problem))")
        #expect(problem?.reason.hasPrefix(swap.song + ": the file changed while it was written") == true)
        #expect(try swap.outsideIsUntouched())
        #expect(try Data(contentsOf: URL(fileURLWithPath: swap.moved)) == swap.bytes)
        #expect(try swap.namesInRoot() == ["moved-song.flac", "song.flac"])
    }
}
