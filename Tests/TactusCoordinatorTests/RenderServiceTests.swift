import Foundation
import Logging
import Synchronization
import TactusAudioProbe
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing
@testable import TactusCoordinator

/// The render service on its own, without a coordinator's loop or sockets: its answers come
/// from its own book of renders and the library, on the read threads it is lent.
@Suite struct RenderServiceTests {
    /// Runs `ask` with a read pool and returns its answer, delivering the pool's work as the
    /// loop would.
    func answer(_ ask: (BackgroundWork, @escaping RequestRoutes.Answer) -> Void) throws -> Result<ClientReply.Response, any Error> {
        let reads = try BackgroundWork(threads: 1, name: "test-reads")
        nonisolated(unsafe) var outcome: Result<ClientReply.Response, any Error>?
        ask(reads) { outcome = $0 }
        return try Wait.value("the service's answer", timeout: .seconds(10)) {
            reads.deliverIfFinished()
            return outcome
        }
    }

    /// The error code the loop would answer with.
    func code(_ outcome: Result<ClientReply.Response, any Error>) -> ErrorCode? {
        CoordinatorLoop.reply(to: [], command: "stretch", outcome, logger: Logger(label: "test")).outcome.errorCode
    }

    @Test func itRefusesWhatItCannotRenderFromItsOwnState() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-render-service")
        let other = try TemporaryDirectory(prefix: "tactus-render-service")
        var configuration = CoordinatorConfiguration(
            dataDirectory: directory.path, frontend: "tcp://127.0.0.1:*", backend: "tcp://127.0.0.1:*",
            events: "tcp://127.0.0.1:*", knownDetectors: [])
        let renderer = StretchRequestTests.FakeRenderer(sizes: [:])
        let withRenderer = try RenderService(coordinator: try Coordinator(
            configuration: configuration, probe: AudioProbe(), renderer: renderer, logger: Logger(label: "test")))
        let song = String(repeating: "ab", count: 32)
        let stretch = StretchRequest(song: song, bpm: 126)
        // A song the library does not hold, read on the lent read thread.
        #expect(code(try answer { reads, done in withRenderer.begin(stretch, sharer: nil, accepting: true, reads: reads, then: done) }) == .notFound)
        // A render it never started: its book answers at once.
        #expect(code(try answer { reads, done in withRenderer.answer(RenderRequest(render: "\(song.prefix(16))-126"), reads: reads, then: done) })
            == .notFound)
        // A stopping server takes no render.
        #expect(code(try answer { reads, done in withRenderer.begin(stretch, sharer: nil, accepting: false, reads: reads, then: done) }) == .unavailable)
        // A server without a renderer refuses them all.
        configuration.dataDirectory = other.path
        let without = try RenderService(coordinator: try Coordinator(configuration: configuration, probe: AudioProbe(), logger: Logger(label: "test")))
        #expect(code(try answer { reads, done in without.begin(stretch, sharer: nil, accepting: true, reads: reads, then: done) }) == .forbidden)
    }
}

extension ClientReply.Outcome {
    /// The error reply's code; nil for an answer.
    var errorCode: ErrorCode? {
        guard case .error(let body) = self else { return nil }
        return body.code
    }
}
