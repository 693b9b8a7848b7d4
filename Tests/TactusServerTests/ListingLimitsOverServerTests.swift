import Foundation
import TactusClient
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// What a real `tactus serve` sends stays within what its clients accept, and a folder of
/// songs goes on past a damaged one: found by an attack on the server (round 3).
@Suite struct ListingLimitsOverServerTests {
    /// A render larger than a piece is read and sent 2 MiB at a time, and the client (and the
    /// command) put the pieces together; a client older than pieces (no `offset`) still gets
    /// the whole file.
    @Test func aRenderLargerThanAPieceComesInPieces() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-render-pieces")
        let rate = 22_050
        let song = directory.file("drums-120.wav")
        // 60 s at 22,050 Hz, 16-bit mono: about 2.6 MB, more at a slower tempo.
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 120, seconds: 60, sampleRate: Double(rate))], sampleRate: rate, to: song)
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--keep-uploads"])
        defer { server.stop() }
        let client = try ServerClient(server.endpoints)
        let id = try submitted(try client.submit([UInt8](try Data(contentsOf: URL(fileURLWithPath: song))), name: "drums-120.wav")).song
        try #require(try client.waitForSongs([id], timeout: .seconds(120)).count == 1)
        let tactus = try TactusClient(server: server.endpoints.frontend, timeout: .seconds(30))
        let (status, wav) = try tactus.renderedSong(StretchRequest(song: id, bpm: 116))
        let size = try #require(status.bytes)
        #expect(size > RenderRequest.maxPieceBytes && wav.count == size)
        #expect(Array(wav.prefix(4)) == Array("RIFF".utf8))
        // Asked without offset, it comes whole, as before pieces; past its end, it is a bad request.
        let whole = try client.request(.render(RenderRequest(render: status.render))).answer(RenderCommand.self)?.wav
        #expect(whole == wav)
        guard case .error(let beyond) = try client.request(.render(RenderRequest(render: status.render, offset: size + 1))) else {
            Issue.record("a piece past the end was answered")
            return
        }
        #expect(beyond.code == .badRequest)
        // A piece from the middle is those bytes of the file.
        let piece = try #require(try client.request(.render(RenderRequest(render: status.render, offset: 1000))).answer(RenderCommand.self)?.wav)
        #expect(piece == Array(wav[1000..<(1000 + RenderRequest.maxPieceBytes)]))
        // The command downloads it whole.
        let output = directory.file("drums-116.wav")
        let run = try CLI.run(["stretch", id.hex, "--bpm", "116", "-o", output, "--server", server.endpoints.frontend])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(wav))
    }

    /// A scan of a folder of many files that are not audio lists the first 1000 with their
    /// reasons and counts them all; the command says so.
    @Test func aScanOfManyNonAudioFilesListsAThousand() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-scan-skips")
        let root = directory.file("music")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for n in 0..<1_050 {
            #expect(FileManager.default.createFile(atPath: "\(root)/notes-\(n).txt", contents: Data("not audio \(n)".utf8)))
        }
        let server = try ServeProcess(dataDirectory: directory.file("data"), extraArguments: ["--library-root", root, "--no-local-workers"])
        defer { server.stop() }
        let json = try CLI.run(["scan", "--json", "--server", server.endpoints.frontend, "--timeout", "60"])
        #expect(json.status == 0, "\(json.standardError)")
        #expect(try ReplySchema.problems(of: json.standardOutput, command: "scan") == nil)
        let summary = try #require(json.jsonLines.first)
        #expect((summary["skipped"] as? [Any])?.count == ScanSummary.maxListedSkips)
        #expect(summary["skipped_count"] as? Int == 1_050)
        let text = try CLI.run(["scan", "--server", server.endpoints.frontend, "--timeout", "60"])
        #expect(text.standardOutput.contains("1050 skipped") && text.standardOutput.contains("(the first 1000 of the 1050 skipped files)"),
                "\(text.standardOutput.suffix(300))")
    }

    /// A folder whose first song the server refuses as damaged: the others are still sent, the
    /// damaged one is named with its code, and the command exits 1 for it.
    @Test func submittingAFolderGoesOnPastADamagedSong() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-submit-damaged")
        let folder = directory.file("batch")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let signal = Synth.clickTrack(bpm: 120, seconds: 8, sampleRate: 22_050)
        let damaged = "\(folder)/a-damaged.wav", good = "\(folder)/b-good.wav"
        try AudioFileWriter(.wav16).write([signal], sampleRate: 22_050, to: damaged)
        try AudioFileWriter(.wav16).write([signal.map { $0 * 0.5 }], sampleRate: 22_050, to: good)
        // The header says 65,535 channels.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: damaged)))
        bytes[22] = 0xFF
        bytes[23] = 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let server = try ServeProcess(dataDirectory: directory.file("data"))
        defer { server.stop() }
        let run = try CLI.run(["submit", folder, "--json", "--server", server.endpoints.frontend])
        #expect(run.status == 1, "\(run.standardError)")
        let lines = run.jsonLines
        let failed = lines.first { $0["file"] as? String == damaged }
        #expect((failed?["error"] as? [String: Any])?["code"] as? String == "corrupt", "\(run.standardOutput)")
        let sent = lines.first { $0["file"] as? String == good }
        #expect((sent?["song"] as? String)?.count == 64, "\(run.standardOutput)")
    }
}
