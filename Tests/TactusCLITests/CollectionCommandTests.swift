import Foundation
import TactusModel
import TactusStore
import TactusTestSupport
import Testing

/// A collection on disk with `--db`: folders analysed, songs named by file name (ambiguous ones
/// listing their candidates), and playlists written as M3U8 files an independent reader opens.
@Suite struct CollectionCommandTests {
    /// `music/run.wav` (120 BPM, tagged), `music/a/intro.wav` and `music/b/intro.wav` (170 and 85 BPM),
    /// analysed into `library.sqlite` by `analyze music`, and a text file the walk skips.
    struct Collection {
        let directory: TemporaryDirectory
        let music: String
        let database: String
        let lines: [[String: Any]]

        init() throws {
            directory = try TemporaryDirectory(prefix: "tactus-collection")
            music = directory.file("music")
            for folder in ["a", "b"] {
                try FileManager.default.createDirectory(atPath: music + "/" + folder, withIntermediateDirectories: true)
            }
            try AudioFileWriter(.wav16, tags: AudioTags(title: "Steady", artist: "Metronome"))
                .write([Synth.drumPattern(bpm: 120, seconds: 12, sampleRate: 22_050)], sampleRate: 22_050, to: music + "/run.wav")
            try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 170, seconds: 10, sampleRate: 22_050)], sampleRate: 22_050, to: music + "/a/intro.wav")
            try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 85, seconds: 11, sampleRate: 22_050)], sampleRate: 22_050, to: music + "/b/intro.wav")
            try "not audio".write(toFile: music + "/notes.txt", atomically: true, encoding: .utf8)
            database = directory.file("library.sqlite")
            let analysed = try CLI.run(["analyze", music, "--db", database, "--json"])
            #expect(analysed.status == 0, "\(analysed.standardError)")
            lines = analysed.jsonLines
        }
    }

    @Test func analyzeWalksFoldersLikeSubmit() throws {
        let collection = try Collection()
        let files = collection.lines.compactMap { $0["analyses"] != nil ? $0["file"] as? String : nil }
        #expect(files == [collection.music + "/a/intro.wav", collection.music + "/b/intro.wav", collection.music + "/run.wav"])
        let skipped = collection.lines.filter { $0["skipped"] != nil }
        #expect(skipped.map { $0["file"] as? String } == [collection.music + "/notes.txt"])
        #expect((skipped.first?["skipped"] as? [String: Any])?["code"] as? String == "unsupported-format")
    }

    @Test func songsAreNamedByFileNameUnlessSeveralShareIt() throws {
        let collection = try Collection()
        let run = try CLI.run(["result", "run.wav", "--db", collection.database, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let song = try #require(run.jsonLines.first?["song"] as? String)
        #expect(song == collection.lines[2]["song"] as? String)
        // The same song by prefix, by file, in compare and truth too.
        #expect(try CLI.run(["result", String(song.prefix(9)), "--db", collection.database, "--json"]).jsonLines.first?["song"] as? String == song)
        #expect(try CLI.run(["compare", "run.wav", "--db", collection.database, "--json"]).jsonLines.first?["song"] as? String == song)
        let truth = try CLI.run(["truth", "--db", collection.database, "set", "run.wav", "120", "--json"])
        #expect(truth.jsonLines.first?["song"] as? String == song, "\(truth.standardError)")

        let ambiguous = try CLI.run(["result", "intro.wav", "--db", collection.database])
        #expect(ambiguous.status == 1)
        #expect(ambiguous.standardError.contains("'intro.wav' names several songs"), "\(ambiguous.standardError)")
        for line in collection.lines.prefix(2) {
            #expect(ambiguous.standardError.contains(try #require(line["song"] as? String)))
        }
        // A file here is hashed: either intro.wav by its path.
        let byPath = try CLI.run(["result", collection.music + "/b/intro.wav", "--db", collection.database, "--json"])
        #expect(byPath.jsonLines.first?["song"] as? String == collection.lines[1]["song"] as? String)
        let unknown = try CLI.run(["result", "outro.wav", "--db", collection.database])
        #expect(unknown.status == 1 && unknown.standardError.contains("no song in the library matches 'outro.wav'"))
    }

    /// The M3U8 files are read back by a small reader written from the format's description, not
    /// Tactus's: every path resolves to the song's file, each #EXTINF has its duration and name.
    static let reader = """
        import json, os, sys
        path = sys.argv[1]
        folder = os.path.dirname(os.path.abspath(path))
        lines = open(path, encoding="utf-8").read().splitlines()
        assert lines[0] == "#EXTM3U", lines[0]
        songs, info = [], None
        for line in lines[1:]:
            if line.startswith("#EXTINF:"):
                seconds, name = line[len("#EXTINF:"):].split(",", 1)
                info = (int(seconds), name)
            elif line and not line.startswith("#"):
                file = line if os.path.isabs(line) else os.path.normpath(os.path.join(folder, line))
                assert os.path.isfile(file), file
                songs.append({"seconds": info[0], "name": info[1], "file": file, "relative": not os.path.isabs(line)})
                info = None
        print(json.dumps(songs))
        """

    static func read(_ playlist: String) throws -> [[String: Any]] {
        let result = try CLI.python(["-c", reader, playlist])
        #expect(result.status == 0, "\(result.standardError)")
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]] ?? []
    }

    @Test func playlistsAndQueriesAreWrittenAsM3U8() throws {
        let collection = try Collection()
        let lists = collection.directory.file("lists")
        try FileManager.default.createDirectory(atPath: lists, withIntermediateDirectories: true)

        // Without a stored path or --music, songs are left out, each named in a warning.
        let bare = try CLI.run(["query", "--bpm", "110..130", "--m3u8", lists + "/bare.m3u8", "--db", collection.database])
        #expect(bare.status == 0, "\(bare.standardError)")
        #expect(bare.standardError.contains("(run.wav) is not in \(lists)/bare.m3u8: no known path"))
        #expect(try Self.read(lists + "/bare.m3u8").isEmpty)

        let query = try CLI.run([
            "query", "--bpm", "165..175", "--octave", "--m3u8", lists + "/170.m3u8", "--music", collection.music, "--db", collection.database,
        ])
        #expect(query.status == 0, "\(query.standardError)")
        #expect(query.standardOutput.contains("wrote \(lists)/170.m3u8: 2 of 2 songs"))
        let found = try Self.read(lists + "/170.m3u8")
        #expect(Set(found.compactMap { $0["file"] as? String }) == [collection.music + "/a/intro.wav", collection.music + "/b/intro.wav"])
        #expect(found.allSatisfy { $0["relative"] as? Bool == false && $0["name"] as? String == "intro.wav" })
        #expect(Set(found.compactMap { $0["seconds"] as? Int }) == [10, 11])

        let playlist = try CLI.run([
            "playlist", "--profile", "10s@120,10s@170", "--m3u8", lists + "/run.m3u8", "--relative", "--music", collection.music,
            "--db", collection.database, "--json",
        ])
        #expect(playlist.status == 0, "\(playlist.standardError)")
        let entries = playlist.jsonLines
        #expect(entries.allSatisfy { $0["off_pct"] is Double && $0["fits"] is Bool })
        // The table of segments: when each starts against its planned time, and its distances.
        let table = try CLI.run(["playlist", "--profile", "10s@120,10s@170", "--db", collection.database])
        #expect(table.standardOutput.contains("SEGMENT  SPM     PLANNED  STARTS  LENGTH  MUSIC"), "\(table.standardOutput)")
        let run = try Self.read(lists + "/run.m3u8")
        #expect(run.count == entries.count)
        #expect(run.allSatisfy { $0["relative"] as? Bool == true })
        #expect(run.first?["file"] as? String == collection.music + "/run.wav")
        #expect(run.first?["name"] as? String == "Metronome - Steady")
        #expect(try String(contentsOfFile: lists + "/run.m3u8", encoding: .utf8).contains("\n../music/run.wav\n"))
    }
}
