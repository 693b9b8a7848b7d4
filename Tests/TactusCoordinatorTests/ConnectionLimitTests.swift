import Foundation
import TactusClient
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

@testable import TactusCoordinator

/// The connections one peer may hold (`--max-connections-per-address`): past the limit its
/// new connections are shut down as they are accepted, while other peers are served, and it
/// is served again once some of its connections close.
@Suite struct ConnectionLimitTests {
    @Test func aPeerPastItsConnectionsIsRefusedWhileOthersAreServed() throws {
        let directory = try TemporaryDirectory()
        // Each test client holds two connections as a client: the frontend and the events.
        let running = try RunningCoordinator(directory: directory.path) { $0.maxConnectionsPerPeer = 4 }
        defer { running.stop() }
        var held = try (0..<2).map { _ in try TestClient(running) }
        for client in held {
            #expect(try client.request(.status(StatusRequest())).answer(StatusCommand.self) != nil)
        }

        // A fifth connection from 127.0.0.1 is shut down as soon as the coordinator reads its
        // acceptance (on a busy machine, its first request may be answered before that), and
        // again each time libzmq connects it again.
        let refused = try running.context.socket(.dealer)
        let watch = try ConnectionWatch(refused, context: running.context)
        try refused.connect(running.endpoints.frontend)
        try Wait.until("the fifth connection to be shut down twice", timeout: .seconds(10)) { try watch.disconnections >= 2 }
        for client in held {
            #expect(try client.request(.status(StatusRequest())).answer(StatusCommand.self) != nil, "the four held are kept")
        }
        // A client past the limit is told why, not asked whether the server runs.
        let told = try TactusClient(server: running.endpoints.frontend, timeout: .seconds(1), retries: 2)
        #expect {
            _ = try told.send(StatusCommand.self, StatusRequest())
        } throws: { error in
            guard case .connectionRefused(let server, _) = error as? ClientError else { return false }
            return server == running.endpoints.frontend && "\(error)".contains("--max-connections-per-address")
        }

        // Another address is another peer (Linux routes all of 127.0.0.0/8 to loopback).
        let elsewhere = try running.context.socket(.dealer)
        let port = running.endpoints.frontend.split(separator: ":").last!
        try elsewhere.connect("tcp://127.0.0.2:0;127.0.0.1:\(port)")
        try elsewhere.send(try ClientRequest(requestID: Array("e1".utf8), .status(StatusRequest())).frames())
        let answer = try #require(try elsewhere.receive(timeout: .seconds(10)), "a client from 127.0.0.2 is answered")
        #expect(try ClientReply(frames: answer, commands: .standard).outcome.answer(StatusCommand.self) != nil)

        // Once a client of 127.0.0.1 leaves, the refused one gets in: libzmq connects again.
        let leaving = held.removeFirst()
        leaving.socket.close()
        leaving.events.close()
        var attempt = 0
        let served = try Wait.value("the refused client to be served once a connection is free", timeout: .seconds(15)) {
            attempt += 1
            // A request queued on a refused connection may be lost with it, or answered late.
            guard try refused.trySend(try ClientRequest(requestID: Array("late\(attempt)".utf8), .status(StatusRequest())).frames()),
                let frames = try refused.receive(timeout: .milliseconds(500))
            else { return nil as StatusResponse? }
            return try ClientReply(frames: frames, commands: .standard).outcome.answer(StatusCommand.self)
        }
        #expect(served.server != nil)
        #expect(try held[0].request(.status(StatusRequest())).answer(StatusCommand.self) != nil)
    }
}
