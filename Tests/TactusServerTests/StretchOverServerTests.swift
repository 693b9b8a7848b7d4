import Foundation
import TactusAnalysis
import TactusAudio
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// `stretch` and `render` against a real `tactus serve`: a song of its library, or a playlist of it,
/// rendered at a tempo on the server and downloaded (`tactus stretch --server`, `tactus playlist
/// --render --server`), and the requests it refuses.
@Suite struct StretchOverServerTests {
    /// The error code of the reply to `body`, "ok" for an answer.
    static func code(_ client: ServerClient, _ body: ClientRequest.Body) throws -> ErrorCode {
        switch try client.request(body) {
        case .ok: ErrorCode(rawValue: "ok")
        case .error(let error): error.code
        }
    }

    @Test func aSongOfTheLibraryIsRenderedAtTheTempoAndDownloaded() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-stretch-server")
        let data = directory.file("data")
        let rate = 22_050
        let song = directory.file("drums-120.flac"), long = directory.file("drums-100.wav"), quiet = directory.file("quiet.wav")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 120, seconds: 20, sampleRate: Double(rate))], sampleRate: rate, to: song)
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 100, seconds: 40, sampleRate: Double(rate))], sampleRate: rate, to: long)
        try AudioFileWriter(.wav16).write([Synth.silence(seconds: 20, sampleRate: Double(rate))], sampleRate: rate, to: quiet)
        // 20 s at 126 BPM is about 0.84 MB of WAV, 40 s at 100 about 1.76 MB: over the limit.
        // Uploaded songs: kept (--keep-uploads) for the renders after their jobs end.
        let server = try ServeProcess(
            dataDirectory: data, extraArguments: ["--max-render-bytes", "1500000", "--max-renders", "1", "--keep-uploads"])
        let client = try ServerClient(server.endpoints)
        var ids: [String: SongID] = [:]
        for file in [song, long, quiet] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            ids[file] = try submitted(try client.submit(bytes, name: (file as NSString).lastPathComponent)).song
        }
        let finished = try client.waitForSongs(Set(ids.values), timeout: .seconds(180))
        try #require(finished.count == 3)

        // Rendered on the server, downloaded by the command, at its target within 1 %.
        let output = directory.file("drums-126.wav")
        let run = try CLI.run(["stretch", song, "--bpm", "126", "-o", output, "--server", server.endpoints.frontend, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try ReplySchema.problems(of: run.standardOutput, command: "stretch") == nil)
        let status = try #require(run.jsonLines.first)
        #expect(status["state"] as? String == "done" && status["song"] as? String == ids[song]?.hex)
        #expect(status["factor"] as? Double == 1 && status["target_bpm"] as? Double == 126)
        let source = try #require(status["source_bpm"] as? Double)
        #expect(abs(source - 120) < 1.2)
        #expect(abs(try #require(status["tempo_ratio"] as? Double) - 126 / source) < 1e-9)
        let size = try #require(FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        #expect(status["bytes"] as? Int == size)
        let rendered = try DecodedAudio(decoding: .file(output))
        #expect(rendered.metadata.sampleRate == rate)
        #expect(abs(Double(rendered.samples.count) / Double(rate) - 20 * source / 126) < 0.1)
        let measured = try #require(SongAnalyzer.builtin().analyze(.file(output)).consensus.bpm)
        let nearest = [0.5, 1, 2].map { measured * $0 }.min { abs($0 - 126) < abs($1 - 126) } ?? measured
        #expect(abs(nearest - 126) <= 1.26, "measured \(measured)")

        // The download lands on no existing file without --force, never on the song, never in a
        // folder: each refusal names the path, before the server is asked.
        let downloaded = try Data(contentsOf: URL(fileURLWithPath: output)), original = try Data(contentsOf: URL(fileURLWithPath: song))
        for (target, extra, reason) in [
            (output, [], "it exists (give --force to replace it)"), (song, ["--force"], "it is the file being read"),
            (directory.path, [], "it is a directory"),
        ] {
            let run = try CLI.run(["stretch", song, "--bpm", "126", "-o", target, "--server", server.endpoints.frontend] + extra)
            #expect(run.status == 1)
            #expect(run.standardError.contains("cannot write '\(target)': \(reason)"), "\(run.standardError)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == downloaded)
        #expect(try Data(contentsOf: URL(fileURLWithPath: song)) == original)

        // Asking again names the same render, already done; its file is downloaded again.
        let render = try #require(status["render"] as? String)
        guard let again = try client.request(.stretch(StretchRequest(song: try #require(ids[song]), bpm: 126))).answer(StretchCommand.self),
            let (done, wav) = try client.request(.render(RenderRequest(render: render))).answer(RenderCommand.self).map({ ($0.status, $0.wav) })
        else {
            Issue.record("the same render was not answered")
            return
        }
        #expect(again.render == render && again.state == .done && done.state == .done)
        #expect(wav.map { Data($0) } == (try Data(contentsOf: URL(fileURLWithPath: output))))

        // Refusals, each with its code.
        let songID = try #require(ids[song])
        #expect(try Self.code(client, .stretch(StretchRequest(song: String(repeating: "0f", count: 32), bpm: 120))) == .notFound)
        #expect(try Self.code(client, .stretch(StretchRequest(song: try #require(ids[quiet]), bpm: 120))) == .noTempo)
        #expect(try Self.code(client, .stretch(StretchRequest(song: songID, bpm: 500))) == .badRequest)
        #expect(try Self.code(client, .stretch(StretchRequest(song: songID, bpm: 150))) == .tooFar)
        #expect(try Self.code(client, .stretch(StretchRequest(song: songID, bpm: 132, maxStretchPct: 5))) == .tooFar)
        #expect(try Self.code(client, .stretch(StretchRequest(song: try #require(ids[long]), bpm: 100))) == .tooLarge)
        #expect(try Self.code(client, .render(RenderRequest(render: "0f0f0f0f0f0f0f0f-120"))) == .notFound)
        // One render in hand at a time (--max-renders 1): a second one meanwhile is busy.
        #expect(try Self.code(client, .stretch(StretchRequest(song: songID, bpm: 116))) == ErrorCode(rawValue: "ok"))
        #expect(try Self.code(client, .stretch(StretchRequest(song: songID, bpm: 124))) == .busy)

        // The command names the song and the server's refusal.
        let refused = try CLI.run(["stretch", song, "--bpm", "150", "-o", directory.file("x.wav"), "--server", server.endpoints.frontend])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains(song) && refused.standardError.contains("too-far"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("x.wav")))
        // The render still in hand is downloaded once done.
        let slower = try CLI.run(["stretch", songID.hex, "--bpm", "116", "-o", directory.file("116.wav"), "--server", server.endpoints.frontend])
        #expect(slower.status == 0, "\(slower.standardError)")
        #expect(server.stop() == 0)
    }

    /// The tempo of `samples[range]` (seconds) as the analyser measures it, at the octave nearest `bpm`.
    static func tempo(of samples: [Float], seconds range: Range<Double>, rate: Int, near bpm: Double, in directory: TemporaryDirectory)
        throws -> Double
    {
        let slice = Array(samples[Int(range.lowerBound * Double(rate))..<min(samples.count, Int(range.upperBound * Double(rate)))])
        let file = directory.file("slice-\(Int(range.lowerBound)).wav")
        try AudioFileWriter(.wav16).write([slice], sampleRate: rate, to: file)
        let measured = try #require(SongAnalyzer.builtin().analyze(.file(file)).consensus.bpm)
        return [0.5, 1, 2].map { measured * $0 }.min { abs($0 - bpm) < abs($1 - bpm) } ?? measured
    }

    @Test func aPlaylistIsRenderedAsOneWorkoutAndDownloaded() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-playlist-server")
        let rate = 22_050
        // Songs analysed in place under a library root: the renders read them there.
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let first = music + "/drums-120.wav", second = music + "/drums-150.flac", long = music + "/drums-100.wav"
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 120, seconds: 16, sampleRate: Double(rate))], sampleRate: rate, to: first)
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 150, seconds: 14, sampleRate: Double(rate))], sampleRate: rate, to: second)
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 100, seconds: 40, sampleRate: Double(rate))], sampleRate: rate, to: long)
        // The workout below is about 1.3 MB of WAV; 40 s at 100 BPM about 1.76 MB: over the limit.
        let server = try ServeProcess(
            dataDirectory: directory.file("data"), extraArguments: ["--max-render-bytes", "1500000", "--library-root", music])
        let client = try ServerClient(server.endpoints)
        var ids: [String: SongID] = [:]
        let scanned = try CLI.run(["scan", "--server", server.endpoints.frontend, "--json"])
        try #require(scanned.status == 0 && scanned.jsonLines.first?["new"] as? Int == 3, "\(scanned.standardOutput) \(scanned.standardError)")
        for file in [first, second, long] {
            ids[file] = SongID(hashing: try Data(contentsOf: URL(fileURLWithPath: file)))
        }
        try #require(try client.waitForSongs(Set(ids.values), timeout: .seconds(180)).count == 3)

        // 16 s at 123 steps per minute, then 14 s at 146: the 120 BPM song, then the 150 BPM one.
        let output = directory.file("workout.wav")
        let run = try CLI.run([
            "playlist", "--profile", "16s@123,14s@146", "--render", output, "--server", server.endpoints.frontend, "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.jsonLines.compactMap { $0["song"] as? String } == [ids[first]?.hex, ids[second]?.hex])
        let again = StretchRequest(playlist: PlaylistQuery(profile: "16s@123,14s@146"))
        guard let status = try client.request(.stretch(again)).answer(StretchCommand.self),
            let (done, wav) = try client.request(.render(RenderRequest(render: status.render))).answer(RenderCommand.self).map({ ($0.status, $0.wav) })
        else {
            Issue.record("the same render was not answered")
            return
        }
        // Asking again names the same render, already done, and downloads the same file.
        #expect(status.render.hasPrefix("playlist-") && status.state == .done && done.state == .done && status.song == nil)
        #expect(wav.map { Data($0) } == (try Data(contentsOf: URL(fileURLWithPath: output))))
        let songs = try #require(done.songs)
        #expect(songs.map(\.song) == [ids[first], ids[second]] && songs.map(\.targetBPM) == [123, 146])
        #expect(abs(songs[0].sourceBPM - 120) < 1.2 && abs(songs[1].sourceBPM - 150) < 1.5)

        // One file: each song stretched to its cadence, less a crossfade of 2 s and up to a beat of each song at the join.
        let rendered = try DecodedAudio(decoding: .file(output))
        #expect(rendered.metadata.sampleRate == rate && done.bytes == 44 + 2 * rendered.samples.count)
        let seconds = Double(rendered.samples.count) / Double(rate)
        let stretched = 16 * songs[0].sourceBPM / 123 + 14 * songs[1].sourceBPM / 146
        #expect(seconds <= stretched - 2 + 0.01 && seconds >= stretched - 2 - 60 / 123 - 60 / 146 - 0.01, "\(seconds) s of \(stretched)")
        #expect(abs((done.durationS ?? 0) - seconds) < 0.01)
        // Each segment at its tempo within 1 %: the first song's 12 s before the join, the second song's last 10 s.
        let early = try Self.tempo(of: rendered.samples, seconds: 0..<12, rate: rate, near: 123, in: directory)
        #expect(abs(early - 123) <= 1.23, "measured \(early)")
        let late = try Self.tempo(of: rendered.samples, seconds: (seconds - 10)..<seconds, rate: rate, near: 146, in: directory)
        #expect(abs(late - 146) <= 1.46, "measured \(late)")

        // Refusals: no song within max_stretch_pct of the cadence, a workout over the limit, a tolerance.
        #expect(try Self.code(client, .stretch(StretchRequest(playlist: PlaylistQuery(cadence: 175, minutes: 1)))) == .notFound)
        #expect(try Self.code(client, .stretch(StretchRequest(playlist: PlaylistQuery(profile: "40s@100")))) == .tooLarge)
        #expect(try Self.code(client, .stretch(StretchRequest(playlist: PlaylistQuery(cadence: 123, tolerance: 0.04)))) == .badRequest)
        let refused = try CLI.run([
            "playlist", "--cadence", "175", "--minutes", "1", "--render", directory.file("x.wav"), "--server", server.endpoints.frontend,
        ])
        #expect(refused.status == 1 && refused.standardError.contains("not-found"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("x.wav")))
        #expect(server.stop() == 0)
    }
}
