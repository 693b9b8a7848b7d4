import Foundation
import TactusDetector
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// The server's log shows what workers and clients send with its control characters escaped:
/// a worker id cannot colour the log, clear a terminal or forge a line of its own.
@Suite struct LogEscapingTests {
    @Test func aHostileWorkerIdIsLoggedEscaped() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(
            dataDirectory: directory.path, extraArguments: ["--no-local-workers", "--log-level", "info"], captureErrors: true)
        let hostile = "w\u{1B}[2J\u{1B}]0;owned\u{07}\n2026-01-01T00:00:00+0000 critical tactus.serve: fake"
        let descriptor = DetectorDescriptor(name: "log-test", version: "1", summary: "a worker played by a test", specific: [])
        let ready = try WorkerMessage.ready(
            ReadyBody(workerId: hostile, detector: DetectorInfo(descriptor), params: try descriptor.resolve()))
        let context = try ZMQContext(socketLinger: .zero)
        let worker = try context.socket(.dealer)
        try worker.connect(server.endpoints.backend)
        try worker.send(try ready.frames())
        // The coordinator answers an accepted READY at once with a heartbeat.
        #expect(try worker.receive(timeout: .seconds(10)) != nil)
        worker.close()
        #expect(server.stop() == 0)
        let log = server.errors
        #expect(log.contains("worker joined"), "\(log)")
        #expect(!log.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "the log holds raw control characters")
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("2026-01-01T00:00:00+0000 critical") }, "a worker id forged a log line")
        #expect(log.contains("w\\x1B[2J\\x1B]0;owned\\x07\\x0A2026"), "\(log)")
    }
}
