import Foundation
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

@testable import TactusCoordinator

/// Workers (anyone who connects to the backend, without CURVE) may not make up detectors
/// without end: the coordinator holds every declaration and lists them all in `detectors`.
@Suite struct DetectorLimitTests {
    @Test func aWorkerOfferingOneDetectorTooManyIsDisconnectedSayingWhy() throws {
        let directory = try TemporaryDirectory()
        // A connection for each of the detectors: more than the workers' connections by default.
        let running = try RunningCoordinator(directory: directory.path) { $0.maxWorkerConnections = CoordinatorLoop.maxDetectors + 10 }
        defer { running.stop() }
        let client = try TestClient(running)
        var workers: [TestWorker] = []
        for index in 0..<CoordinatorLoop.maxDetectors {
            workers.append(try TestWorker(running, detector: "made-up-\(index)", id: "w\(index)"))
        }
        // Heartbeats keep the workers alive through the waits (7.5 s of silence and they are gone).
        try Wait.until("every made-up detector offered", timeout: .seconds(30)) {
            for worker in workers { try worker.heartbeat() }
            guard let offered = try client.request(.detectors).answer(DetectorsCommand.self) else { return false }
            return offered.detectors.count == CoordinatorLoop.maxDetectors
        }
        let extra = try TestWorker(running, detector: "one-too-many", id: "extra")
        var refusal: DisconnectBody?
        let deadline = ContinuousClock.now + .seconds(10)
        while refusal == nil && ContinuousClock.now < deadline {
            for worker in workers { try worker.heartbeat() }
            if let frames = try extra.socket.receive(timeout: .milliseconds(100)),
                case .disconnect(let body) = try CoordinatorMessage(frames: frames)
            {
                refusal = body
            }
        }
        let body = try #require(refusal, "no DISCONNECT")
        #expect(body.error?.code == .tooLarge)
        #expect(body.error?.message.contains("at most \(CoordinatorLoop.maxDetectors) different detectors") == true, "\(body)")
        // A worker offering a detector already offered still joins.
        workers.append(try TestWorker(running, detector: "made-up-0", id: "another"))
        try Wait.until("the second worker of made-up-0", timeout: .seconds(10)) {
            for worker in workers { try worker.heartbeat() }
            let offered = try client.request(.detectors).answer(DetectorsCommand.self)
            return offered?.detectors.first { $0.detector.name == "made-up-0" }?.workers == 2
        }
        withExtendedLifetime(workers) {}
    }
}
