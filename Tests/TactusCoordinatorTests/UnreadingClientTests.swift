import Foundation
import TactusDetector
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// A client that sends requests and never reads the answers: once its queue at the
/// coordinator is full, its answers are dropped, and the coordinator goes on answering the
/// others and stops when told. (A blocking send to a router-mandatory ROUTER waited for that
/// client for ever, and the whole loop with it.)
@Suite struct UnreadingClientTests {
    @Test func aClientThatDoesNotReadItsAnswersStopsNothing() throws {
        let directory = try TemporaryDirectory()
        // Answers of about 40 KB, so that a few thousand fill the queues and the TCP buffers.
        let running = try RunningCoordinator(directory: directory.path) { configuration in
            configuration.knownDetectors = (0..<60).map {
                DetectorDescriptor(name: "detector-\($0)", version: "1.0", summary: String(repeating: "a detector. ", count: 50), specific: [])
            }
        }
        let flooder = try running.context.socket(.dealer)
        try flooder.set(.receiveHighWaterMark(1))
        try flooder.connect(running.endpoints.frontend)
        let request = try ClientRequest(requestID: Array("flood".utf8), .detectors).frames()
        var sent = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while sent < 4000 && ContinuousClock.now < deadline {
            if try flooder.trySend(request) { sent += 1 } else { Thread.sleep(forTimeInterval: 0.001) }
        }
        #expect(sent == 4000, "the coordinator stopped reading requests after \(sent)")

        // Another client, while the coordinator works through the flood and after.
        let client = try TestClient(running)
        for _ in 0..<4 {
            guard let answer = try client.request(.detectors, timeout: .seconds(10))?.answer(DetectorsCommand.self) else {
                Issue.record("another client got no answer: the loop is waiting for the client that does not read")
                return  // stopping would wait for the stuck loop
            }
            #expect(answer.detectors.count == 60)
            // The requests are spread over two seconds on purpose: during the flood and after it.
            Thread.sleep(forTimeInterval: 0.5)
        }

        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            running.stop()
            stopped.signal()
        }
        #expect(stopped.wait(timeout: .now() + 15) == .success, "the coordinator did not stop")
    }
}
