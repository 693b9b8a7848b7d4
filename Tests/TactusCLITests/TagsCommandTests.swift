import Foundation
import TactusModel
import TactusStore
import TactusTestSupport
import Testing

/// `tactus tags read` and `tactus tags write` with `--db`: the library's tempi written into the
/// files (checked by mutagen), the files' tags read back as reference tempi.
@Suite(.enabled(if: Mutagen.isAvailable, "python3 cannot import mutagen (make deps installs python3-mutagen)"))
struct TagsCommandTests {
    /// Analysed songs in a fresh library: an MP3 at 120 BPM, a FLAC at 100 BPM, a WAV at 140 BPM.
    struct Library {
        let directory: TemporaryDirectory
        let mp3: String, flac: String, wav: String
        let database: String

        init() throws {
            directory = try TemporaryDirectory(prefix: "tactus-tags-cli")
            mp3 = directory.file("run.mp3")
            flac = directory.file("walk.flac")
            wav = directory.file("sprint.wav")
            let tags = AudioTags(title: "Tempo Song", artist: "Tactus")
            try AudioFileWriter(.mp3(.constant), tags: tags)
                .write([Synth.drumPattern(bpm: 120, seconds: 10, sampleRate: 44_100)], sampleRate: 44_100, to: mp3)
            try AudioFileWriter(.flac, tags: tags)
                .write([Synth.drumPattern(bpm: 100, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: flac)
            try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 140, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: wav)
            database = directory.file("library.sqlite")
            let analysed = try CLI.run(["analyze", mp3, flac, wav, "--db", database])
            #expect(analysed.status == 0, "\(analysed.standardError)")
        }
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test func theConsensusIsWrittenIntoTheTagsAndReadBackAsReferences() throws {
        let library = try Library()
        let original = try Self.bytes(library.mp3)

        let dryRun = try CLI.run(["tags", "write", "--dry-run", library.mp3, library.flac, library.wav, "--db", library.database, "--json"])
        #expect(dryRun.status == 0, "\(dryRun.standardError)")
        #expect(dryRun.jsonLines.map { $0["outcome"] as? String } == ["would-write", "would-write", "skipped"])
        #expect(try Self.bytes(library.mp3) == original)
        // A folder stands for the audio files under it, in name order (the library file is not audio).
        let folder = try CLI.run(["tags", "write", "--dry-run", library.directory.path, "--db", library.database, "--json"])
        #expect(folder.jsonLines.map { $0["file"] as? String } == [library.mp3, library.wav, library.flac])

        let run = try CLI.run(["tags", "write", library.mp3, library.flac, library.wav, "--db", library.database, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.jsonLines
        #expect(lines.map { $0["outcome"] as? String } == ["written", "written", "skipped"])
        #expect(lines[2]["reason"] as? String == "unsupported format for BPM tags (wav)")

        // The MP3: TBPM an integer, TXXX:BPM one decimal, both from the library's consensus.
        let mp3BPM = try #require(lines[0]["bpm"] as? Double)
        #expect(abs(mp3BPM - 120) < 3)
        let mp3Tags = try Mutagen.tags(of: library.mp3)
        #expect(mp3Tags["TBPM"] == [String(Int(mp3BPM.rounded()))])
        #expect(mp3Tags["TXXX:BPM"] == [String(format: "%.1f", mp3BPM)])
        #expect(mp3Tags["TIT2"] == ["Tempo Song"])
        #expect(mp3Tags["TPE1"] == ["Tactus"])
        let flacBPM = try #require(lines[1]["bpm"] as? Double)
        #expect(try Mutagen.tags(of: library.flac)["BPM"] == [String(format: "%.1f", flacBPM)])
        #expect(try Mutagen.tags(of: library.flac)["TITLE"] == ["Tempo Song"])

        // The songs took the SHA-256 of their new bytes, keeping their analyses.
        let newSong = try #require(lines[0]["new_song"] as? String)
        #expect(newSong != lines[0]["song"] as? String)
        #expect(newSong == SongID(hashing: try Self.bytes(library.mp3)).hex)

        let read = try CLI.run(["tags", "read", library.mp3, library.flac, library.wav, "--db", library.database, "--json"])
        #expect(read.status == 0, "\(read.standardError)")
        let imported = read.jsonLines
        #expect(imported.map { $0["outcome"] as? String } == ["imported", "imported", "skipped"])
        #expect(imported[0]["bpm"] as? Double == (String(format: "%.1f", mp3BPM) as NSString).doubleValue)
        #expect(imported[2]["reason"] as? String == "no BPM tag")
        let store = try TactusStore.Library(path: library.database)
        let song = try #require(SongID(newSong))
        let reference = try #require(try store.reference(for: song))
        #expect(reference.source == "tag")
        #expect(try store.analyses(of: song).count > 0)

        // `compare` measures the detectors against the tag.
        let compare = try CLI.run(["compare", "--db", library.database, library.mp3, "--json"])
        #expect(compare.status == 0, "\(compare.standardError)")
        let compared = try #require(compare.jsonLines.first?["reference"] as? [String: Any])
        #expect(compared["source"] as? String == "tag")
        #expect(compared["bpm"] as? Double == reference.bpm)
    }

    @Test func tagsWrittenByAnotherProgramBecomeReferencesUnlessOneWasSetByHand() throws {
        let library = try Library()
        let tagged = library.directory.file("tagged.flac")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 90, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: tagged)
        try Mutagen.setBPM("91.5", in: tagged)
        #expect(try CLI.run(["analyze", tagged, "--db", library.database]).status == 0)

        let read = try CLI.run(["tags", "read", tagged, library.flac, "--db", library.database, "--json"])
        #expect(read.status == 0, "\(read.standardError)")
        #expect(read.jsonLines.map { $0["outcome"] as? String } == ["imported", "skipped"])
        #expect(read.jsonLines.first?["bpm"] as? Double == 91.5)
        #expect(read.jsonLines.first?["tag"] as? String == "91.5")

        #expect(try CLI.run(["truth", "--db", library.database, "set", tagged, "92"]).status == 0)
        let kept = try CLI.run(["tags", "read", tagged, "--db", library.database, "--json"])
        #expect(kept.jsonLines.first?["outcome"] as? String == "skipped")
        #expect(kept.jsonLines.first?["reason"] as? String == "has a reference tempo from manual (replace overrides it)")
        let replaced = try CLI.run(["tags", "read", "--replace", tagged, "--db", library.database, "--json"])
        #expect(replaced.jsonLines.first?["outcome"] as? String == "imported")

        let notInLibrary = library.directory.file("new.flac")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 90, seconds: 8, sampleRate: 22_050)], sampleRate: 22_050, to: notInLibrary)
        let unknown = try CLI.run(["tags", "read", notInLibrary, "--db", library.database])
        #expect(unknown.status == 0)
        #expect(unknown.standardOutput.contains("not in the library"))
    }

    /// With --db, songs named by stored file name or taken with --all are found at their stored
    /// paths; songs without one are skipped; the written file's location takes its new size and time.
    @Test func storedNamesAndAllAreFoundAtTheirStoredPaths() throws {
        let library = try Library()
        let store = try TactusStore.Library(path: library.database)
        let mp3Song = SongID(hashing: try Self.bytes(library.mp3))
        let root = library.directory.path
        try store.recordLocation(SongLocation(root: root, path: "run.mp3", byteSize: try Self.bytes(library.mp3).count, mtimeNs: 1), of: mp3Song)

        let all = try CLI.run(["tags", "write", "--all", "--db", library.database, "--json"])
        #expect(all.status == 0, "\(all.standardError)")
        let outcomes = Dictionary(all.jsonLines.map { ($0["song"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        let written = try #require(outcomes[mp3Song.hex])
        #expect(written["outcome"] as? String == "written" && written["file"] as? String == library.mp3)
        #expect(all.jsonLines.filter { $0["outcome"] as? String == "skipped" }.count == 2)
        #expect(all.jsonLines.filter { $0["outcome"] as? String == "skipped" }.allSatisfy {
            ($0["reason"] as? String)?.contains("no file of this song on this machine") == true
        })
        #expect(try Mutagen.tags(of: library.mp3)["TBPM"]?.count == 1)
        let newSong = try #require(SongID(written["new_song"] as? String ?? ""))
        let location = try #require(try store.locations(of: newSong).first)
        #expect(location.byteSize == (try Self.bytes(library.mp3)).count)
        #expect(location.mtimeNs != 1)

        let read = try CLI.run(["tags", "read", "run.mp3", "--db", library.database, "--json"])
        #expect(read.status == 0, "\(read.standardError)")
        #expect(read.jsonLines.first?["outcome"] as? String == "imported")
        let ambiguous = try CLI.run(["tags", "read", "nothing.flac", "--db", library.database, "--json"])
        #expect(ambiguous.status == 1)
        #expect(ambiguous.jsonLines.first?["code"] as? String == "not-found")
    }

    @Test func skipsSayWhyAndFailuresNameTheFile() throws {
        let library = try Library()
        let strict = try CLI.run(["tags", "write", "--min-confidence", "1", library.flac, "--db", library.database, "--json"])
        #expect(strict.status == 0, "\(strict.standardError)")
        let reason = try #require(strict.jsonLines.first?["reason"] as? String)
        #expect(reason.contains("below the minimum 1"), "\(reason)")

        let unknownDetector = try CLI.run(["tags", "write", "--detector", "no-such", library.flac, "--db", library.database, "--json"])
        #expect(unknownDetector.jsonLines.first?["reason"] as? String == "no analysis by no-such")
        let byDetector = try CLI.run(["tags", "write", "--detector", "comb-filter", library.flac, "--db", library.database, "--json"])
        #expect(byDetector.jsonLines.first?["outcome"] as? String == "written", "\(byDetector.standardOutput)")
        #expect(byDetector.jsonLines.first?["from"] as? String == "comb-filter")
        // --backup keeps the file as it was next to the rewritten one.
        let flacBefore = try Mutagen.tags(of: library.flac)
        let backedUp = try CLI.run(["tags", "write", "--consensus", "--backup", library.flac, "--db", library.database, "--json"])
        #expect(backedUp.jsonLines.first?["outcome"] as? String == "written", "\(backedUp.standardOutput)")
        #expect(backedUp.jsonLines.first?["backup"] as? String == library.flac + ".bak")
        #expect(try Mutagen.tags(of: library.flac + ".bak") == flacBefore)

        let missing = library.directory.file("missing.mp3")
        let readOnly = library.mp3
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: readOnly)
        let failed = try CLI.run(["tags", "write", missing, readOnly, "--db", library.database])
        #expect(failed.status == 1)
        #expect(failed.standardOutput.contains("\(missing): no such file"))
        #expect(failed.standardOutput.contains("\(readOnly): the file is read-only"))
        #expect(failed.standardOutput.hasSuffix("written 0, skipped 0, failed 2\n"))

        let usage = try CLI.run(["tags", "write", "--consensus", "--detector", "comb-filter", library.flac, "--db", library.database])
        #expect(usage.status == 2)
        // Songs, or --all: one of them.
        #expect(try CLI.run(["tags", "read", "--db", library.database]).status == 2)
        #expect(try CLI.run(["tags", "read", "--all", library.flac, "--db", library.database]).status == 2)
    }

    /// An MP3 whose ID3v2.3 tag nests chapter frames 200,000 deep, which overflows TagLib's
    /// stack: the file is reported failed, named, and the other files are still done (the
    /// command died with SIGSEGV, naming nothing, before TagLib ran in its own process).
    @Test func aFileThatCrashesTagLibFailsAloneAndIsNamed() throws {
        let library = try Library()
        let audio = [UInt8](try Data(contentsOf: URL(fileURLWithPath: library.mp3)))
        let nested = library.directory.file("chapters.mp3")
        try Data(NestedChapters.mp3(from: audio)).write(to: URL(fileURLWithPath: nested))
        let analysed = try CLI.run(["analyze", nested, "--db", library.database])
        #expect(analysed.status == 0, "\(analysed.standardError)")

        let run = try CLI.run(["tags", "read", nested, library.flac, "--db", library.database, "--json"])
        #expect(run.status == 1, "\(run.standardError)")
        let reports = Dictionary(uniqueKeysWithValues: run.jsonLines.compactMap { line in (line["file"] as? String).map { ($0, line) } })
        #expect(reports[nested]?["outcome"] as? String == "failed", "\(run.standardOutput)")
        #expect((reports[nested]?["reason"] as? String)?.contains("SIGSEGV") == true, "\(run.standardOutput)")
        #expect(reports[library.flac]?["outcome"] != nil && reports[library.flac]?["outcome"] as? String != "failed", "\(run.standardOutput)")
    }

    /// A stored path replaced by a symbolic link to a private file elsewhere (a copy of the same
    /// bytes, so that no check of content stands in the way): the link is refused and named,
    /// whether the song is named by id, taken with --all or named by the path itself, and the
    /// file it leads to keeps its bytes and its mode 0600.
    @Test func aStoredPathReplacedByALinkIsRefusedAndNamed() throws {
        let library = try Library()
        let store = try TactusStore.Library(path: library.database)
        let bytes = try Self.bytes(library.mp3)
        let song = SongID(hashing: bytes)
        try store.recordLocation(SongLocation(root: library.directory.path, path: "run.mp3", byteSize: bytes.count, mtimeNs: 1), of: song)
        let elsewhere = try TemporaryDirectory(prefix: "tactus-tags-outside")
        let outside = elsewhere.file("private.mp3")
        try bytes.write(to: URL(fileURLWithPath: outside))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: outside)
        try FileManager.default.removeItem(atPath: library.mp3)
        try FileManager.default.createSymbolicLink(atPath: library.mp3, withDestinationPath: outside)

        for names in [[song.hex], ["--all"], [library.mp3]] {
            let run = try CLI.run(["tags", "write"] + names + ["--db", library.database, "--json"])
            #expect(run.status == 1, "\(names): \(run.standardOutput)")
            let report = try #require(run.jsonLines.first { $0["file"] as? String == library.mp3 }, "\(names): \(run.standardOutput)")
            #expect(report["outcome"] as? String == "failed")
            #expect(report["code"] as? String == "forbidden")
            #expect((report["reason"] as? String)?.hasPrefix("\(library.mp3): run.mp3 is a symbolic link") == true, "\(report)")
            #expect(try Self.bytes(outside) == bytes)
            #expect(try FileManager.default.attributesOfItem(atPath: outside)[.posixPermissions] as? Int == 0o600)
        }
        let read = try CLI.run(["tags", "read", song.hex, "--db", library.database, "--json"])
        #expect(read.jsonLines.first?["code"] as? String == "forbidden", "\(read.standardOutput)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: library.mp3) == outside)
    }
}
