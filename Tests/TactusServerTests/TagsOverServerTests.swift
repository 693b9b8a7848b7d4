import Foundation
import TactusModel
import TactusTestSupport
import Testing

/// Songs analysed in place under a server's library root, named by their stored file names, and
/// their BPM tags written and read by the server (checked by mutagen): only files below the
/// roots, every other tag and the audio kept.
@Suite(.enabled(if: Mutagen.isAvailable, "python3 cannot import mutagen (make deps installs python3-mutagen)"))
struct TagsOverServerTests {
    /// Polls the server's library until `count` songs have a consensus tempo (60 s at most).
    static func waitForSongs(_ count: Int, server: String) throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let songs = try CLI.run(["query", "--bpm", "1..1000", "--json", "--server", server]).jsonLines
            if songs.count >= count { return songs }
            Thread.sleep(forTimeInterval: 0.5)
        }
        Issue.record("the server did not analyse \(count) songs within 60 s")
        return []
    }

    @Test func theServerWritesAndReadsTheTagsOfFilesBelowItsRoots() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags-server")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let mp3 = music + "/run.mp3", flac = music + "/walk.flac", uploaded = directory.file("elsewhere.flac")
        let tags = AudioTags(title: "Tempo Song", artist: "Tactus")
        try AudioFileWriter(.mp3(.constant), tags: tags)
            .write([Synth.drumPattern(bpm: 120, seconds: 10, sampleRate: 44_100)], sampleRate: 44_100, to: mp3)
        try AudioFileWriter(.flac, tags: tags).write([Synth.drumPattern(bpm: 100, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: flac)
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 90, seconds: 8, sampleRate: 22_050)], sampleRate: 22_050, to: uploaded)
        let audioBefore = try Mutagen.tags(of: mp3)

        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", music])
        defer { _ = server.stop() }
        let frontend = server.endpoints.frontend
        let scan = try CLI.run(["scan", "--server", frontend])
        try #require(scan.status == 0, "\(scan.standardError)")
        let submitted = try CLI.run(["submit", uploaded, "--wait", "--server", frontend])
        try #require(submitted.status == 0, "\(submitted.standardError)")
        let songs = try Self.waitForSongs(3, server: frontend)
        try #require(songs.count == 3)

        // Stored file names name songs over the wire (`resolve`), and so do stored paths.
        let byName = try CLI.run(["result", "run.mp3", "--json", "--server", frontend])
        #expect(byName.status == 0, "\(byName.standardError)")
        let mp3Song = try #require(byName.jsonLines.first?["song"] as? String)
        #expect(mp3Song == SongID(hashing: try Data(contentsOf: URL(fileURLWithPath: mp3))).hex)
        #expect(try CLI.run(["compare", "walk.flac", "--json", "--server", frontend]).status == 0)

        let dryRun = try CLI.run(["tags", "write", "--all", "--dry-run", "--json", "--server", frontend])
        #expect(dryRun.status == 0, "\(dryRun.standardError)")
        #expect(Set(dryRun.jsonLines.map { $0["outcome"] as? String }) == ["would-write", "skipped"])
        #expect(try Mutagen.tags(of: mp3) == audioBefore)

        let written = try CLI.run(["tags", "write", "--all", "--json", "--server", frontend])
        #expect(written.status == 0, "\(written.standardError)")
        for run in [dryRun, written] {
            #expect(try ReplySchema.problems(of: run.standardOutput, command: "tags", part: "/properties/files/items") == nil)
        }
        let reports = Dictionary(written.jsonLines.map { ($0["song"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        let mp3Report = try #require(reports[mp3Song])
        #expect(mp3Report["outcome"] as? String == "written")
        #expect(mp3Report["file"] as? String == mp3)
        let bpm = try #require(mp3Report["bpm"] as? Double)
        let mp3Tags = try Mutagen.tags(of: mp3)
        #expect(mp3Tags["TBPM"] == [String(Int(bpm.rounded()))])
        #expect(mp3Tags["TXXX:BPM"] == [String(format: "%.1f", bpm)])
        #expect(mp3Tags["TIT2"] == ["Tempo Song"] && mp3Tags["TPE1"] == ["Tactus"])
        #expect(mp3Report["new_song"] as? String == SongID(hashing: try Data(contentsOf: URL(fileURLWithPath: mp3))).hex)
        let flacTags = try Mutagen.tags(of: flac)
        #expect(flacTags["BPM"]?.count == 1 && flacTags["TITLE"] == ["Tempo Song"])
        // The uploaded song has no file below the root: the server does not write it.
        let skipped = written.jsonLines.filter { $0["outcome"] as? String == "skipped" }
        #expect(skipped.count == 1)
        #expect((skipped.first?["reason"] as? String)?.contains("below the server's library roots") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: uploaded)).count > 0)

        // The rewritten files keep their analyses under their new ids, found again by name.
        let again = try CLI.run(["result", "run.mp3", "--json", "--server", frontend])
        #expect(again.jsonLines.first?["song"] as? String == mp3Report["new_song"] as? String)
        #expect((again.jsonLines.first?["analyses"] as? [Any])?.isEmpty == false)

        // Read back: the tags become the songs' reference tempi, compared with the detectors.
        let read = try CLI.run(["tags", "read", "run.mp3", "walk.flac", "--json", "--server", frontend])
        #expect(read.status == 0, "\(read.standardError)")
        #expect(read.jsonLines.map { $0["outcome"] as? String } == ["imported", "imported"])
        let compare = try CLI.run(["compare", "--json", "--server", frontend])
        let tagSection = try #require(compare.jsonLines.first?["tags"] as? [String: Any])
        #expect(tagSection["songs"] as? Int == 2)
        #expect(tagSection["suspects_total"] as? Int == 0)

        // A scan afterwards sees the rewritten files as they are recorded: nothing new or changed.
        let rescan = try CLI.run(["scan", "--json", "--server", frontend])
        #expect(rescan.status == 0, "\(rescan.standardError)")
        let summary = rescan.jsonLines.last ?? [:]
        #expect(summary["new"] as? Int == 0 && summary["changed"] as? Int == 0, "\(rescan.standardOutput)")

        // The write options over the wire: a minimum confidence no analysis reaches skips the
        // song; one detector's tempo with --backup keeps the file as it was next to it.
        let strict = try CLI.run(["tags", "write", "walk.flac", "--min-confidence", "1", "--json", "--server", frontend])
        #expect(strict.status == 0, "\(strict.standardError)")
        #expect(strict.jsonLines.first?["outcome"] as? String == "skipped")
        #expect((strict.jsonLines.first?["reason"] as? String)?.contains("below the minimum 1") == true, "\(strict.standardOutput)")
        let flacBefore = try Mutagen.tags(of: flac)
        let byDetector = try CLI.run(["tags", "write", "walk.flac", "--detector", "comb-filter", "--backup", "--json", "--server", frontend])
        #expect(byDetector.status == 0, "\(byDetector.standardError)")
        let report = try #require(byDetector.jsonLines.first)
        #expect(report["outcome"] as? String == "written" && report["from"] as? String == "comb-filter", "\(report)")
        #expect(report["backup"] as? String == flac + ".bak")
        #expect(try Mutagen.tags(of: flac + ".bak") == flacBefore, "the backup is the file as it was")
        let combBPM = try #require(report["bpm"] as? Double)
        #expect(try Mutagen.tags(of: flac)["BPM"] == [String(format: "%.1f", combBPM)])
        #expect(try Mutagen.tags(of: flac)["TITLE"] == ["Tempo Song"])
    }

    /// A tag written into one of two copies of a song gives that file new bytes, not the other
    /// copy: the server reads the other copy again at once, and finds it as the old bytes, a
    /// song of its own (it was recorded as the rewritten song, attack round 7, M3).
    @Test func writingOneCopyOfASongLeavesTheOtherCopyItsOwnSong() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tags-copies")
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music + "/sub", withIntermediateDirectories: true)
        let first = music + "/a.mp3", copy = music + "/sub/b.mp3"
        try AudioFileWriter(.mp3(.constant)).write([Synth.drumPattern(bpm: 120, seconds: 10, sampleRate: 44_100)], sampleRate: 44_100, to: first)
        try FileManager.default.copyItem(atPath: first, toPath: copy)
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", music])
        defer { _ = server.stop() }
        let frontend = server.endpoints.frontend
        try #require(try CLI.run(["scan", "--server", frontend]).status == 0)
        let songs = try Self.waitForSongs(1, server: frontend)
        try #require(songs.count == 1 && (songs.first?["paths"] as? [String])?.count == 2, "\(songs)")

        let written = try CLI.run(["tags", "write", first, "--json", "--server", frontend])
        #expect(written.status == 0, "\(written.standardError)")
        let report = try #require(written.jsonLines.first)
        #expect(report["outcome"] as? String == "written" && (report["reason"] as? String)?.contains("b.mp3") == true, "\(report)")
        let hashes = try [first, copy].map { SongID(hashing: try Data(contentsOf: URL(fileURLWithPath: $0))).hex }
        #expect(hashes[0] != hashes[1])
        // Each file is its own song, found by its own bytes.
        let deadline = Date().addingTimeInterval(60)
        var paths = [String: [String]]()
        while Date() < deadline {
            paths = [:]
            for line in try CLI.run(["query", "--bpm", "1..1000", "--json", "--server", frontend]).jsonLines {
                if let song = line["song"] as? String { paths[song] = line["paths"] as? [String] ?? [] }
            }
            if paths.count == 2 { break }
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(paths[hashes[0]]?.map { ($0 as NSString).lastPathComponent } == ["a.mp3"], "\(paths)")
        #expect(paths[hashes[1]]?.map { ($0 as NSString).lastPathComponent } == ["b.mp3"], "\(paths)")
        let result = try CLI.run(["result", copy, "--json", "--server", frontend])
        #expect(result.status == 0 && result.jsonLines.first?["song"] as? String == hashes[1], "\(result.standardError)")
    }

    /// A song's file below the root replaced by a symbolic link to a private file elsewhere (the
    /// same bytes, so no check of content stands in the way): the server refuses it, naming the
    /// link, and the file it leads to keeps its bytes and its mode 0600.
    @Test func aSongReplacedByALinkIsRefusedAndNamed() throws {
        let swap = try LinkSwap(name: "walk.flac")
        let server = try ServeProcess(dataDirectory: swap.directory.file("data"), extraArguments: ["--library-root", swap.root])
        defer { _ = server.stop() }
        let frontend = server.endpoints.frontend
        try #require(try CLI.run(["scan", "--server", frontend]).status == 0)
        try #require(try Self.waitForSongs(1, server: frontend).count == 1)
        try swap.swapForLink()

        for action in ["write", "read"] {
            let run = try CLI.run(["tags", action, "--all", "--json", "--server", frontend])
            let report = try #require(run.jsonLines.first, "\(run.standardOutput) \(run.standardError)")
            #expect(report["outcome"] as? String == "failed" && report["code"] as? String == "forbidden", "\(report)")
            #expect(report["file"] as? String == swap.song)
            #expect((report["reason"] as? String)?.hasPrefix("\(swap.song): walk.flac is a symbolic link") == true, "\(report)")
        }
        #expect(try swap.outsideIsUntouched())
    }
}
