import Foundation
import TactusAnalysis
import TactusAudio
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// `stretch` and `render` against a real `tactus serve`: a song of its library rendered at a tempo
/// on the server and downloaded (`tactus stretch --server`), and the requests it refuses.
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
        let server = try ServeProcess(dataDirectory: data, extraArguments: ["--max-render-bytes", "1500000", "--max-renders", "1"])
        let client = try ServerClient(server.endpoints)
        var ids: [String: String] = [:]
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
        let status = try #require(run.jsonLines.first)
        #expect(status["state"] as? String == "done" && status["song"] as? String == ids[song])
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

        // Asking again names the same render, already done; its file is downloaded again.
        let render = try #require(status["render"] as? String)
        guard case .ok(.stretch(let again)) = try client.request(.stretch(StretchRequest(song: try #require(ids[song]), bpm: 126))),
            case .ok(.render(let done, let wav)) = try client.request(.render(RenderRequest(render: render)))
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
        let slower = try CLI.run(["stretch", songID, "--bpm", "116", "-o", directory.file("116.wav"), "--server", server.endpoints.frontend])
        #expect(slower.status == 0, "\(slower.standardError)")
        #expect(server.stop() == 0)
    }
}
