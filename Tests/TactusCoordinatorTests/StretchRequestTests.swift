import Foundation
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// `stretch` and `render` requests answered by the coordinator with a renderer played by the test:
/// the song's stored bytes and tempo handed to it, its failures reported, its files downloaded,
/// limited and forgotten.
@Suite struct StretchRequestTests {
    /// Writes, for each target tempo it knows, that many bytes (or, for a size of 0, the song's own
    /// bytes); fails `unreadable` for any other tempo.
    struct FakeRenderer: SongRenderer {
        var sizes: [Double: Int]

        func render(songAt path: String, name: String, sourceBPM: Double, targetBPM: Double, to output: String) throws(ErrorBody)
            -> Double
        {
            guard let size = sizes[targetBPM] else { throw ErrorBody(code: .unreadable, message: "\(name): corrupt frame") }
            let bytes = size == 0 ? FileManager.default.contents(atPath: path) : Data(repeating: 7, count: size)
            guard let bytes, FileManager.default.createFile(atPath: output, contents: bytes) else {
                throw ErrorBody(code: .internal, message: "cannot write \(output)")
            }
            return 6 * sourceBPM / targetBPM
        }
    }

    /// A coordinator with the fake renderer and a song whose consensus is 128 BPM.
    static func start(
        _ directory: TemporaryDirectory, configure: (inout CoordinatorConfiguration) -> Void = { _ in }
    ) throws -> (running: RunningCoordinator, client: TestClient, song: SongID, bytes: [UInt8]) {
        let renderer = FakeRenderer(sizes: [126: 0, 64: 1000, 124: 400_000])
        let running = try RunningCoordinator(directory: directory.path, renderer: renderer) {
            $0.maxRenderBytes = 300_000
            // The song is uploaded: without --keep-uploads its bytes go once its jobs end.
            $0.keepUploads = true
            configure(&$0)
        }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w1")
        let bytes = try testSong()
        let submit = ClientRequest.Body.submit(SubmitRequest(name: "song.wav", detectors: ["fake"]), audio: bytes)
        guard let submitted = try client.request(submit).answer(SubmitCommand.self) else { throw HarnessError("the song was not accepted") }
        guard let (job, _) = try worker.nextJob() else { throw HarnessError("no job") }
        try worker.finish(job, bpm: 128)
        _ = try client.waitForEvent { if case .songDone(let body) = $0 { body.song == submitted.song } else { false } }
        return (running, client, submitted.song, bytes)
    }

    /// The render's status once it is no longer pending, with its file.
    static func finished(_ client: TestClient, _ render: String) throws -> (RenderStatus, [UInt8]?) {
        try Wait.value("render \(render) to end", timeout: .seconds(10)) {
            guard let (status, wav) = try client.request(.render(RenderRequest(render: render))).answer(RenderCommand.self).map({ ($0.status, $0.wav) }) else {
                throw HarnessError("render \(render) was not answered")
            }
            return status.state == .pending ? nil : (status, wav)
        }
    }

    static func started(_ client: TestClient, _ request: StretchRequest) throws -> RenderStatus {
        guard let status = try client.request(.stretch(request)).answer(StretchCommand.self) else { throw HarnessError("\(request) refused") }
        return status
    }

    @Test func theRendererGetsTheStoredSongAndItsOutcomeIsReported() throws {
        let directory = try TemporaryDirectory()
        let (running, client, song, bytes) = try Self.start(directory)
        defer { running.stop() }

        // The renderer is handed the song's stored bytes: its "render" is the song itself.
        let started = try Self.started(client, StretchRequest(song: String(song.hex.prefix(10)), bpm: 126))
        #expect(started.render == "\(song.hex.prefix(16))-126" && started.song == song && started.state == .pending)
        #expect(started.sourceBPM == 128 && started.factor == 1 && abs((started.tempoRatio ?? .nan) - 126.0 / 128) < 1e-12)
        let (done, wav) = try Self.finished(client, started.render)
        #expect(done.state == .done && done.bytes == bytes.count && wav == bytes)
        #expect(abs((done.durationS ?? 0) - 6 * 128 / 126) < 1e-9)

        // At half time: the renderer is told the song's tempo at that octave.
        let half = try Self.started(client, StretchRequest(song: song, bpm: 64))
        #expect(half.factor == 0.5 && half.tempoRatio == 1)
        #expect(try Self.finished(client, half.render).0.bytes == 1000)

        // A renderer's failure is the render's error; a file over the limit fails it and is removed.
        let failing = try Self.finished(client, try Self.started(client, StretchRequest(song: song, bpm: 130)).render)
        #expect(failing.0.state == .failed && failing.0.error == ErrorBody(code: .unreadable, message: "song.wav: corrupt frame"))
        #expect(failing.1 == nil)
        let large = try Self.finished(client, try Self.started(client, StretchRequest(song: song, bpm: 124)).render)
        #expect(large.0.state == .failed && large.0.error?.code == .tooLarge)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.file("renders")).sorted()
        #expect(files == ["\(song.hex.prefix(16))-126.wav", "\(song.hex.prefix(16))-64.wav"])

        // A failed render is started again when asked again; a done one is not.
        #expect(try Self.started(client, StretchRequest(song: song, bpm: 130)).state == .pending)
        #expect(try Self.started(client, StretchRequest(song: song, bpm: 126)).state == .done)
    }

    /// A song whose stored duration is far beyond an `Int` of samples (a worker's word, stored
    /// before its audio facts were checked) is refused `too-large`, and the coordinator goes on
    /// answering: the size estimate trapped and took the coordinator down with it.
    @Test func aStoredDurationBeyondAnyRenderIsTooLargeNotACrash() throws {
        let directory = try TemporaryDirectory()
        let (running, client, song, _) = try Self.start(directory)
        defer { running.stop() }
        try SQLiteLockHolder(path: directory.file("library.sqlite"), statements: "UPDATE songs SET duration_s = 1e300;").release()
        guard case .error(let error) = try client.request(.stretch(StretchRequest(song: song, bpm: 126))) else {
            Issue.record("a render of a 1e300-second song was started")
            return
        }
        #expect(error.code == .tooLarge && error.message.contains("--max-render-bytes"), "\(error)")
        #expect(try client.request(.status(StatusRequest())).answer(StatusCommand.self) != nil)
    }

    @Test func rendersAreForgottenAfterTheirRetention() throws {
        let directory = try TemporaryDirectory()
        let (running, client, song, _) = try Self.start(directory) { $0.renderRetentionS = 0.3 }
        defer { running.stop() }
        let render = try Self.started(client, StretchRequest(song: song, bpm: 126)).render
        #expect(try Self.finished(client, render).0.state == .done)
        // The retention passing is what is tested: the render ended before `finished` saw it
        // done, so it is more than 0.3 s old once this returns, however late.
        Thread.sleep(forTimeInterval: 0.4)
        guard case .error(let error) = try client.request(.render(RenderRequest(render: render))) else {
            Issue.record("an expired render was answered")
            return
        }
        #expect(error.code == .notFound && error.message.contains(render))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("renders")).isEmpty)
    }

    /// A playlist is built from the library within max_stretch_pct and handed to the renderer as a
    /// workout, which this renderer of single songs refuses.
    @Test func aPlaylistIsHandedToTheRendererAsAWorkout() throws {
        let directory = try TemporaryDirectory()
        let (running, client, song, _) = try Self.start(directory) { $0.maxRenderBytes = 10_000_000 }
        defer { running.stop() }
        let started = try Self.started(client, StretchRequest(playlist: PlaylistQuery(cadence: 126, minutes: 0.1), maxStretchPct: 2))
        #expect(started.songs == [RenderedSong(song: song, sourceBPM: 128, targetBPM: 126)] && started.song == nil)
        let (failed, wav) = try Self.finished(client, started.render)
        #expect(failed.state == .failed && failed.error?.code == .forbidden && wav == nil)
        // Nothing within 1 % of 126 (or 63, or 252): an empty playlist.
        guard case .error(let error) = try client.request(.stretch(StretchRequest(playlist: PlaylistQuery(cadence: 126), maxStretchPct: 1)))
        else {
            Issue.record("an empty playlist was rendered")
            return
        }
        #expect(error.code == .notFound && error.message.contains("max_stretch_pct"))
    }

    @Test func aCoordinatorWithoutARendererRefusesStretch() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let stretch = ClientRequest.Body.stretch(StretchRequest(song: String(repeating: "ab", count: 32), bpm: 120))
        guard case .error(let error) = try TestClient(running).request(stretch) else {
            Issue.record("stretch was answered without a renderer")
            return
        }
        #expect(error.code == .forbidden)
    }
}
