import Foundation
import TactusModel
import TactusTestSupport
import Testing

/// Songs analysed in place under a `--library-root`: `tactus scan` and `serve --watch` against
/// a real server and real files written through libsndfile.
@Suite(.serialized) struct InPlaceLibraryTests {
    /// Writes a drum pattern at `bpm` (its `seed` makes the bytes differ between files).
    static func writeSong(_ path: String, bpm: Double, seconds: Double = 12, seed: UInt64 = 7, format: AudioFileWriter.Format = .wav16) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try AudioFileWriter(format).write(
            [Synth.drumPattern(bpm: bpm, seconds: seconds, sampleRate: 22_050, seed: seed)], sampleRate: 22_050, to: path)
    }

    /// Runs `tactus scan --json` through the server and returns its summary.
    static func scan(_ frontend: String, _ paths: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let result = try CLI.run(["scan", "--json", "--server", frontend, "--timeout", "30"] + paths)
        try #require(result.status == 0, "scan: \(result.standardError)", sourceLocation: sourceLocation)
        // The summary is the protocol's answer to `scan`.
        #expect(try ReplySchema.problems(of: result.standardOutput, command: "scan") == nil, sourceLocation: sourceLocation)
        return try #require(result.jsonLines.first, sourceLocation: sourceLocation)
    }

    /// The songs `query` lists (every tempo), by song id, each with its paths; waits up to
    /// `seconds` for `until` to hold.
    static func songs(
        _ frontend: String, seconds: Double = 120, until: ([String: [String]]) -> Bool = { _ in true }
    ) throws -> [String: [String]] {
        let deadline = Date().addingTimeInterval(seconds)
        var songs = [String: [String]]()
        repeat {
            let result = try CLI.run(["query", "--bpm", "20..400", "--json", "--server", frontend, "--timeout", "10"])
            if result.status == 0 {
                songs = [:]
                for line in result.jsonLines {
                    if let song = line["song"] as? String { songs[song] = (line["paths"] as? [String]) ?? [] }
                }
                if until(songs) { return songs }
            }
            Thread.sleep(forTimeInterval: 0.5)
        } while Date() < deadline
        return songs
    }

    /// Every file of `directory`, recursively, with its size.
    static func bytes(under directory: String) -> Int {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var total = 0
        while let name = enumerator?.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? Int) ?? 0 }
        }
        return total
    }

    /// New files are queued and analysed where they lie; a rename and a move keep the song and
    /// its analyses (same bytes), a deleted file's song leaves query results, a touched file is
    /// unchanged, a rewritten one is changed and queued, links and non-audio files are skipped
    /// with their reasons; nothing is copied into the data directory.
    @Test func scansFollowRenamesMovesAndDeletions() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-scan")
        let root = directory.file("music")
        let data = directory.file("data")
        try Self.writeSong(root + "/a.wav", bpm: 100, seed: 1)
        try Self.writeSong(root + "/b.flac", bpm: 140, seed: 2, format: .flac)
        try Self.writeSong(root + "/sub/c.wav", bpm: 120, seed: 3)
        try Self.writeSong(root + "/d.wav", bpm: 90, seed: 4)
        let server = try ServeProcess(dataDirectory: data, extraArguments: ["--library-root", root])
        defer { server.stop() }
        let frontend = server.endpoints.frontend

        let first = try Self.scan(frontend)
        #expect(first["new"] as? Int == 4)
        #expect(first["queued_jobs"] as? Int == 12)
        #expect((first["skipped"] as? [Any])?.isEmpty == true)
        let analysed = try Self.songs(frontend) { $0.count == 4 }
        try #require(analysed.count == 4, "analysed: \(analysed)")
        let resolvedRoot = try #require(realpath(root, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) })
        #expect(Set(analysed.values.flatMap { $0 }) == Set(["a.wav", "b.flac", "sub/c.wav", "d.wav"].map { resolvedRoot + "/" + $0 }))
        let songOf = Dictionary(uniqueKeysWithValues: analysed.map { ($0.value.first!, $0.key) })
        // Analysed in place: no song bytes in the data directory.
        #expect(Self.bytes(under: data + "/blobs") == 0)

        let again = try Self.scan(frontend)
        #expect(again["unchanged"] as? Int == 4 && again["new"] as? Int == 0 && again["queued_jobs"] as? Int == 0)

        // Playlists a player can open, from the server's stored paths: `query` and a profiled
        // `playlist` (with its entries' distances, as JSON) write M3U8 files whose every path
        // (relative to the playlist's folder with --relative, else absolute) is one of the songs.
        let lists = directory.file("lists")
        try FileManager.default.createDirectory(atPath: lists, withIntermediateDirectories: true)
        let exported = try CLI.run(["query", "--bpm", "20..400", "--m3u8", lists + "/all.m3u8", "--relative", "--server", frontend])
        #expect(exported.status == 0, "\(exported.standardError)")
        let playlist = try CLI.run([
            "playlist", "--profile", "20s@100,20s@140", "--m3u8", lists + "/run.m3u8", "--json", "--server", frontend, "--timeout", "10",
        ])
        #expect(playlist.status == 0, "\(playlist.standardError)")
        #expect(!playlist.jsonLines.isEmpty && playlist.jsonLines.allSatisfy { $0["off_pct"] is Double && $0["start_s"] is Double })
        for (name, count) in [("all.m3u8", 4), ("run.m3u8", playlist.jsonLines.count)] {
            let text = try String(contentsOfFile: lists + "/" + name, encoding: .utf8)
            #expect(text.hasPrefix("#EXTM3U\n"))
            let entries = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(entries.count == count, "\(name): \(text)")
            #expect(text.components(separatedBy: "#EXTINF:").count - 1 == count)
            for entry in entries {
                let file = name == "all.m3u8" ? lists + "/" + entry : String(entry)
                #expect(entry.hasPrefix(name == "all.m3u8" ? "../music/" : resolvedRoot + "/"), "\(name): \(entry)")
                #expect(FileManager.default.fileExists(atPath: file), "\(name): \(entry)")
            }
        }

        try FileManager.default.moveItem(atPath: root + "/a.wav", toPath: root + "/a-renamed.wav")
        try FileManager.default.moveItem(atPath: root + "/b.flac", toPath: root + "/sub/b.flac")
        try FileManager.default.removeItem(atPath: root + "/d.wav")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: root + "/sub/c.wav")
        try FileManager.default.createSymbolicLink(atPath: root + "/escape.wav", withDestinationPath: root + "/sub/c.wav")
        try Data("not a song".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        let moved = try Self.scan(frontend)
        #expect(moved["moved"] as? Int == 2)
        #expect(moved["missing"] as? Int == 1)
        #expect(moved["unchanged"] as? Int == 1)
        #expect(moved["new"] as? Int == 0 && moved["changed"] as? Int == 0 && moved["queued_jobs"] as? Int == 0)
        let skipped = (moved["skipped"] as? [[String: Any]]) ?? []
        #expect(skipped.count == 2)
        #expect(skipped.contains { ($0["path"] as? String)?.hasSuffix("/escape.wav") == true && ($0["reason"] as? String)?.contains("symbolic link") == true })
        #expect(skipped.contains { ($0["path"] as? String)?.hasSuffix("/notes.txt") == true && ($0["code"] as? String) == "unsupported-format" })

        let after = try Self.songs(frontend)
        let aSong = try #require(songOf[resolvedRoot + "/a.wav"])
        let bSong = try #require(songOf[resolvedRoot + "/b.flac"])
        let dSong = try #require(songOf[resolvedRoot + "/d.wav"])
        #expect(after[aSong] == [resolvedRoot + "/a-renamed.wav"])
        #expect(after[bSong] == [resolvedRoot + "/sub/b.flac"])
        #expect(after[dSong] == nil, "a deleted song is left out of query results")
        #expect(after.count == 3)
        // The moved song kept its analyses: `result` lists them, with its one location.
        let result = try CLI.run(["result", aSong, "--json", "--server", frontend, "--timeout", "10"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("a-renamed.wav"))

        // A file rewritten with other audio is changed: its new bytes are queued, the old song leaves.
        let cSong = try #require(songOf[resolvedRoot + "/sub/c.wav"])
        try Self.writeSong(root + "/sub/c.wav", bpm: 150, seed: 5)
        let changed = try Self.scan(frontend, [root + "/sub"])
        #expect(changed["changed"] as? Int == 1 && changed["queued_jobs"] as? Int == 3)
        #expect(changed["unchanged"] as? Int == 1, "sub/b.flac")
        let final = try Self.songs(frontend) { $0.count == 3 && $0[cSong] == nil }
        #expect(final[cSong] == nil && final.count == 3, "\(final)")
        #expect(final.values.contains([resolvedRoot + "/sub/c.wav"]))
    }

    /// `serve --watch`: a file copied into a root is analysed without a scan being asked for,
    /// and a file deleted leaves query results.
    @Test func watchAnalysesAFileCopiedIn() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch")
        let root = directory.file("music")
        try FileManager.default.createDirectory(atPath: root + "/deep", withIntermediateDirectories: true)
        let outside = directory.file("incoming.wav")
        try Self.writeSong(outside, bpm: 128, seed: 9)
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", root, "--watch"])
        defer { server.stop() }
        let frontend = server.endpoints.frontend
        // Wait until the local worker is there (and the watch, set up before the server answers).
        let client = try ServerClient(server.endpoints)
        try Wait.until("the server's local worker to join") { try client.serverStatus().workers.count == 1 }

        try FileManager.default.copyItem(atPath: outside, toPath: root + "/deep/incoming.wav")
        let songs = try Self.songs(frontend, seconds: 120) { !$0.isEmpty }
        #expect(songs.count == 1)
        #expect(songs.values.first?.first?.hasSuffix("/deep/incoming.wav") == true)

        // A new folder with a song in it, moved in at once.
        try Self.writeSong(directory.file("album/track.flac"), bpm: 96, seed: 10, format: .flac)
        try FileManager.default.moveItem(atPath: directory.file("album"), toPath: root + "/album")
        let both = try Self.songs(frontend, seconds: 120) { $0.count == 2 }
        #expect(both.count == 2, "a folder moved in is watched and scanned")

        try FileManager.default.removeItem(atPath: root + "/deep/incoming.wav")
        let left = try Self.songs(frontend, seconds: 30) { $0.count == 1 }
        #expect(left.count == 1 && left.values.first?.first?.hasSuffix("/album/track.flac") == true)
    }

    /// A server's scan records a file refused for its content, and once two scans have refused
    /// it, the next lists the file as skipped again (without reading it: `scan --db`'s test shows
    /// that), until the file changes, even with its size and modification time put back.
    @Test func aFileRefusedForItsContentIsNotReadAgainUntilItChanges() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-scan-refused")
        let root = directory.file("music")
        try Self.writeSong(directory.file("song.wav"), bpm: 120, seed: 5)
        let song = try Data(contentsOf: URL(fileURLWithPath: directory.file("song.wav")))
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/cover.wav", contents: Data(repeating: 0x5A, count: song.count)))
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", root])
        defer { server.stop() }
        let frontend = server.endpoints.frontend

        let first = try Self.scan(frontend)
        let reasons = try #require(first["skipped"] as? [[String: Any]]).map { $0["reason"] as? String }
        #expect(first["new"] as? Int == 0 && reasons.count == 1, "\(first)")
        // Refused twice in a row: trusted to be refused again.
        #expect((try Self.scan(frontend)["skipped"] as? [[String: Any]])?.map { $0["reason"] as? String } == reasons)

        #expect((try Self.scan(frontend)["skipped"] as? [[String: Any]])?.map { $0["reason"] as? String } == reasons)

        // A song written over it, its size and modification time put back: read again (the
        // inode's change time cannot be put back: attack round 8, L1).
        try UnseenRewrite.replace(root + "/cover.wav", with: song)
        let third = try Self.scan(frontend)
        #expect(third["new"] as? Int == 1 && (third["skipped"] as? [Any])?.isEmpty == true, "\(third)")
        #expect(try Self.songs(frontend) { $0.count == 1 }.count == 1)
    }

    /// A root that cannot be opened any more (renamed away and a file put in its place) is listed
    /// as skipped, naming it, by a scan of every root, and the other roots are scanned; what was
    /// stored below it is kept until it can be read again (one bad root failed every whole-library
    /// scan, and under --watch lost the changes of the others: attack round 8, M2).
    @Test func aRootThatCannotBeOpenedFailsOnlyItself() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-scan-bad-root")
        let good = directory.file("good"), bad = directory.file("bad")
        try Self.writeSong(good + "/one.wav", bpm: 120, seed: 1)
        try Self.writeSong(bad + "/two.wav", bpm: 140, seed: 2)
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", good, "--library-root", bad])
        defer { server.stop() }
        let frontend = server.endpoints.frontend
        #expect(try Self.scan(frontend)["new"] as? Int == 2)

        #expect(rename(bad, directory.file("bad.old")) == 0)
        #expect(FileManager.default.createFile(atPath: bad, contents: Data("not a folder".utf8)))
        try Self.writeSong(good + "/three.wav", bpm: 100, seed: 3)
        let summary = try Self.scan(frontend)
        #expect(summary["new"] as? Int == 1 && summary["missing"] as? Int == 0, "\(summary)")
        let skipped = try #require(summary["skipped"] as? [[String: Any]])
        #expect(skipped.count == 1 && skipped.first?["path"] as? String == bad && skipped.first?["code"] as? String == "unreadable", "\(summary)")
        #expect((skipped.first?["reason"] as? String ?? "").contains("cannot be opened"), "\(summary)")
        #expect(try Self.songs(frontend) { $0.count == 3 }.count == 3)
    }

    /// After an in-place scan of a folder, the data directory holds less than 5 % of the
    /// music's size (nothing is copied; the library holds the analyses and envelopes).
    @Test func theDataDirectoryStaysSmallAfterAnInPlaceScan() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-inplace-size")
        let root = directory.file("music")
        let data = directory.file("data")
        for index in 0..<6 {
            try Self.writeSong(root + "/song\(index).wav", bpm: 90 + Double(index) * 12, seconds: 45, seed: UInt64(20 + index))
        }
        let music = Self.bytes(under: root)
        let server = try ServeProcess(dataDirectory: data, extraArguments: ["--library-root", root])
        let summary = try Self.scan(server.endpoints.frontend)
        #expect(summary["new"] as? Int == 6)
        let songs = try Self.songs(server.endpoints.frontend, seconds: 240) { $0.count == 6 }
        #expect(songs.count == 6)
        server.stop()
        let stored = Self.bytes(under: data)
        #expect(Double(stored) < 0.05 * Double(music), "data \(stored) bytes for \(music) bytes of music")
    }

    /// Starts `tactus worker` for `detector` against `backend`, its log (info) in `log`.
    static func startWorker(_ backend: String, detector: String, roots: [String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["worker", "--connect", backend, "--detector", detector, "--log-level", "info"]
            + roots.flatMap { ["--library-root", $0] }
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A worker that declares the song's root opens the file itself (its JOB names the path); a
    /// worker that does not gets the bytes, read from the file when the job is sent. When the
    /// file changed after the scan, both refuse the job with `song-changed` rather than
    /// analysing other bytes under the old song's name.
    @Test func workersSharingTheRootOpenTheFileOthersGetItsBytes() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-inplace-workers")
        let root = directory.file("music")
        try Self.writeSong(root + "/shared.wav", bpm: 110, seed: 31)
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", root, "--no-local-workers"])
        defer { server.stop() }
        let frontend = server.endpoints.frontend
        let scanned = try Self.scan(frontend)
        #expect(scanned["new"] as? Int == 1 && scanned["queued_jobs"] as? Int == 3)

        let sharing = try Self.startWorker(server.endpoints.backend, detector: "comb-filter", roots: [root], log: directory.file("sharing.log"))
        let remote = try Self.startWorker(server.endpoints.backend, detector: "autocorrelation", roots: [], log: directory.file("remote.log"))
        defer {
            for worker in [sharing, remote] where worker.isRunning { worker.terminate(); worker.waitUntilExit() }
        }
        let song = try Self.songID(root + "/shared.wav")
        let done = try Self.jobStates(frontend, song: song, seconds: 120) { states in
            states["comb-filter"] == "done" && states["autocorrelation"] == "done"
        }
        #expect(done["comb-filter"] == "done" && done["autocorrelation"] == "done", "\(done)")
        let sharingLog = try String(contentsOfFile: directory.file("sharing.log"), encoding: .utf8)
        let remoteLog = try String(contentsOfFile: directory.file("remote.log"), encoding: .utf8)
        #expect(sharingLog.contains("/shared.wav"), "the sharing worker opened the file by its path: \(sharingLog)")
        #expect(remoteLog.contains(" bytes"), "the other worker got the bytes: \(remoteLog)")

        // The file is rewritten after the scan, before its next jobs run: neither worker analyses it.
        try Self.writeSong(root + "/second.wav", bpm: 130, seed: 32)
        for worker in [sharing, remote] { worker.terminate(); worker.waitUntilExit() }
        let second = try Self.scan(frontend)
        #expect(second["new"] as? Int == 1)
        let secondSong = try Self.songID(root + "/second.wav")
        try Self.writeSong(root + "/second.wav", bpm: 70, seed: 33)
        let sharingAgain = try Self.startWorker(server.endpoints.backend, detector: "comb-filter", roots: [root], log: directory.file("sharing2.log"))
        let remoteAgain = try Self.startWorker(server.endpoints.backend, detector: "autocorrelation", roots: [], log: directory.file("remote2.log"))
        defer {
            for worker in [sharingAgain, remoteAgain] where worker.isRunning { worker.terminate(); worker.waitUntilExit() }
        }
        let failed = try Self.jobStates(frontend, song: secondSong, seconds: 120) { states in
            states["comb-filter"] == "failed" && states["autocorrelation"] == "failed"
        }
        #expect(failed["comb-filter"] == "failed" && failed["autocorrelation"] == "failed", "\(failed)")
        let status = try CLI.run(["status", secondSong, "--json", "--server", frontend, "--timeout", "10"])
        #expect(status.standardOutput.components(separatedBy: "song-changed").count - 1 >= 2, "\(status.standardOutput)")
    }

    /// The SHA-256 of a file, as the server names its song.
    static func songID(_ path: String) throws -> String {
        SongID(hashing: try Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    /// The states of a song's jobs by detector (`tactus status SONG --json`), waiting up to
    /// `seconds` for `until` to hold.
    static func jobStates(
        _ frontend: String, song: String, seconds: Double, until: ([String: String]) -> Bool
    ) throws -> [String: String] {
        let deadline = Date().addingTimeInterval(seconds)
        var states = [String: String]()
        repeat {
            let result = try CLI.run(["status", song, "--json", "--server", frontend, "--timeout", "10"])
            states = [:]
            for line in result.jsonLines {
                for job in (line["jobs"] as? [[String: Any]]) ?? [line] {
                    if let detector = job["detector"] as? String, let state = job["state"] as? String { states[detector] = state }
                }
            }
            if until(states) { return states }
            Thread.sleep(forTimeInterval: 0.5)
        } while Date() < deadline
        return states
    }

    /// A submit by path checks the size on the open descriptor before reading (a sparse file of
    /// 3 GiB is `too-large` at once), and a large file below the limit is hashed in bounded
    /// pieces, never loaded whole: the coordinator's peak resident memory stays far below the
    /// file's size.
    @Test func aLargeFileIsRefusedOrStreamedWithoutBeingLoaded() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-inplace-large")
        let root = directory.file("music")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let huge = root + "/huge.wav", large = root + "/large.bin"
        for (path, size) in [(huge, off_t(3) << 30), (large, off_t(200) << 20)] {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(descriptor >= 0 && ftruncate(descriptor, size) == 0)
            close(descriptor)
        }
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", root, "--no-local-workers"])
        defer { server.stop() }
        let frontend = server.endpoints.frontend
        let tooLarge = try CLI.run(["scan", huge, "--json", "--server", frontend, "--timeout", "30"])
        #expect(tooLarge.status == 0, "\(tooLarge.standardError)")
        let refused = (tooLarge.jsonLines.first?["skipped"] as? [[String: Any]]) ?? []
        #expect(refused.first?["code"] as? String == "too-large", "\(tooLarge.standardOutput)")
        let notAudio = try CLI.run(["scan", large, "--json", "--server", frontend, "--timeout", "60"])
        #expect(notAudio.status == 0, "\(notAudio.standardError)")
        let skipped = (notAudio.jsonLines.first?["skipped"] as? [[String: Any]]) ?? []
        #expect(skipped.first?["code"] as? String == "unsupported-format", "\(notAudio.standardOutput)")
        let status = try String(contentsOfFile: "/proc/\(server.processID)/status", encoding: .utf8)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        #expect(peak > 0 && peak < 150_000, "the coordinator's peak resident memory is \(peak) kB for a 200 MiB file")
    }

    /// An uploaded song's bytes are removed when its jobs end; with `--keep-uploads` they stay
    /// until `tactus prune` removes them (`--dry-run` only counts them).
    @Test func uploadsAreKeptOnlyUntilTheirJobsEndOrUntilPruned() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-prune")
        let song = directory.file("upload.wav")
        try Self.writeSong(song, bpm: 118, seed: 41)
        for keep in [false, true] {
            let data = directory.file(keep ? "kept" : "dropped")
            let server = try ServeProcess(dataDirectory: data, extraArguments: keep ? ["--keep-uploads"] : [])
            defer { server.stop() }
            let frontend = server.endpoints.frontend
            let submitted = try CLI.run(["submit", song, "--wait", "--server", frontend, "--timeout", "30", "--json"])
            try #require(submitted.status == 0, "\(submitted.standardError)")
            #expect((Self.bytes(under: data + "/blobs") > 0) == keep, "keep-uploads \(keep)")
            guard keep else { continue }
            let counted = try CLI.run(["prune", "--dry-run", "--json", "--server", frontend])
            #expect(counted.jsonLines.first?["removed"] as? Int == 1 && counted.jsonLines.first?["dry_run"] as? Bool == true)
            #expect(try ReplySchema.problems(of: counted.standardOutput, command: "prune") == nil)
            #expect(Self.bytes(under: data + "/blobs") > 0)
            let pruned = try CLI.run(["prune", "--json", "--server", frontend])
            #expect(pruned.status == 0, "\(pruned.standardError)")
            #expect(pruned.jsonLines.first?["removed"] as? Int == 1 && pruned.jsonLines.first?["kept"] as? Int == 0)
            #expect(Self.bytes(under: data + "/blobs") == 0)
            // The song keeps its analyses.
            let result = try CLI.run(["result", Self.songID(song), "--json", "--server", frontend])
            #expect(result.status == 0 && result.standardOutput.contains("comb-filter"), "\(result.standardError)")
        }
    }

    /// `prune --db DATA/library.sqlite` on a stopped server's data directory: the kept upload
    /// whose jobs are done is removed (a dry run only counts it), the one whose job is still
    /// queued is kept, and the analyses stay.
    @Test func pruneWithDbRemovesTheBlobsAStoppedServerNoLongerNeeds() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-prune-db")
        let data = directory.file("data")
        let done = directory.file("done.wav")
        let queued = directory.file("queued.wav")
        try Self.writeSong(done, bpm: 118, seed: 42)
        try Self.writeSong(queued, bpm: 96, seed: 43)
        do {
            let server = try ServeProcess(dataDirectory: data, extraArguments: ["--keep-uploads"])
            defer { server.stop() }
            let submitted = try CLI.run(["submit", done, "--wait", "--server", server.endpoints.frontend, "--timeout", "30", "--json"])
            try #require(submitted.status == 0, "\(submitted.standardError)")
        }
        do {
            // No workers: the second upload's jobs stay queued when the server stops.
            let server = try ServeProcess(dataDirectory: data, extraArguments: ["--keep-uploads", "--no-local-workers"])
            defer { server.stop() }
            let submitted = try CLI.run(["submit", queued, "--server", server.endpoints.frontend, "--timeout", "30", "--json"])
            try #require(submitted.status == 0, "\(submitted.standardError)")
        }
        let blobs = data + "/blobs"
        let stored = Self.bytes(under: blobs)
        #expect(stored > 0)
        let database = data + "/library.sqlite"
        let counted = try CLI.run(["prune", "--db", database, "--dry-run", "--json"])
        #expect(counted.status == 0, "\(counted.standardError)")
        #expect(counted.jsonLines.first?["removed"] as? Int == 1 && counted.jsonLines.first?["kept"] as? Int == 1)
        #expect(counted.jsonLines.first?["dry_run"] as? Bool == true)
        #expect(Self.bytes(under: blobs) == stored)
        let pruned = try CLI.run(["prune", "--db", database, "--json"])
        #expect(pruned.status == 0, "\(pruned.standardError)")
        #expect(pruned.jsonLines.first?["removed"] as? Int == 1 && pruned.jsonLines.first?["kept"] as? Int == 1)
        #expect(FileManager.default.fileExists(atPath: "\(blobs)/\(try Self.songID(done).prefix(2))/\(try Self.songID(done))") == false)
        #expect(FileManager.default.fileExists(atPath: "\(blobs)/\(try Self.songID(queued).prefix(2))/\(try Self.songID(queued))"))
        let result = try CLI.run(["result", "done.wav", "--json", "--db", database])
        #expect(result.status == 0 && result.standardOutput.contains("comb-filter"), "\(result.standardError)")
        // Text output.
        let text = try CLI.run(["prune", "--db", database])
        #expect(text.standardOutput.contains("removed 0 song blobs (0 bytes); kept 1"), "\(text.standardOutput)")
    }
}
