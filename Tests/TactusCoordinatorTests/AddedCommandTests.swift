import Foundation
import Logging
import Synchronization
import TactusAudioProbe
import TactusCoordinator
import TactusProtocol
import TactusTestSupport
import Testing

/// A command defined here, in the test target: a running total per client. Adding it to a
/// coordinator takes its definition, its entry in the table and its service, nothing else.
enum TallyCommand: ClientCommand {
    static let name = "tally"

    struct Request: WireBody {
        var add: Int
    }

    struct Answer: WireBody {
        var total: Int
        var requests: Int
    }
}

/// The tally's service: it owns its state (a total per client), as every service does.
final class TallyService: CommandService {
    typealias Command = TallyCommand
    private let totals = Mutex<[String: TallyCommand.Answer]>([:])

    func answer(_ request: TallyCommand.Request, from origin: RequestOrigin) throws -> TallyCommand.Answer {
        guard request.add >= 0 else { throw ErrorBody(code: .invalidParameter, message: "add: \(request.add) is negative") }
        return totals.withLock { totals in
            var tally = totals[origin.client, default: TallyCommand.Answer(total: 0, requests: 0)]
            tally.total += request.add
            tally.requests += 1
            totals[origin.client] = tally
            return tally
        }
    }
}

@Suite struct AddedCommandTests {
    static let commands = ClientCommands.standard.adding(TallyCommand.self)

    @Test func aCommandAddedWithItsServiceIsAnsweredPerClientBesideTheProtocolsOwn() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-added-command")
        let running = try RunningCoordinator(directory: directory.path) { configuration in
            configuration.commands = Self.commands
            configuration.services = [TallyService()]
        }
        defer { running.stop() }
        let alice = try TestClient(running, commands: Self.commands)
        let bob = try TestClient(running, commands: Self.commands)
        let tally = { (client: TestClient, add: Int) in
            try client.request(ClientRequest.Body(TallyCommand.self, TallyCommand.Request(add: add)))
        }
        #expect(try tally(alice, 2).answer(TallyCommand.self) == TallyCommand.Answer(total: 2, requests: 1))
        #expect(try tally(alice, 5).answer(TallyCommand.self) == TallyCommand.Answer(total: 7, requests: 2))
        #expect(try tally(bob, 1).answer(TallyCommand.self) == TallyCommand.Answer(total: 1, requests: 1))
        guard case .error(let refusal) = try tally(bob, -1) else { Issue.record("a negative add was answered"); return }
        #expect(refusal.code == .invalidParameter && refusal.message.contains("negative"))
        // The protocol's own commands are answered as before.
        #expect(try alice.request(.status(StatusRequest())).answer(StatusCommand.self)?.server != nil)
    }

    @Test func aCoordinatorWithoutTheCommandRefusesItByName() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-added-command")
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running, commands: Self.commands)
        guard case .error(let refusal) = try client.request(ClientRequest.Body(TallyCommand.self, TallyCommand.Request(add: 1))) else {
            Issue.record("an unknown command was answered")
            return
        }
        #expect(refusal.code == .unknownCommand && refusal.message.contains("tally"))
    }

    @Test func aCommandWithoutItsServiceOrAServiceWithoutItsCommandStopsTheCoordinatorAtStart() throws {
        for (commands, services) in [(Self.commands, [] as [any CommandService]), (ClientCommands.standard, [TallyService()])] {
            let directory = try TemporaryDirectory(prefix: "tactus-added-command")
            var configuration = CoordinatorConfiguration(
                dataDirectory: directory.path, frontend: "tcp://127.0.0.1:*", backend: "tcp://127.0.0.1:*",
                events: "tcp://127.0.0.1:*", knownDetectors: [])
            configuration.commands = commands
            configuration.services = services
            let coordinator = try Coordinator(configuration: configuration, probe: AudioProbe(), logger: Logger(label: "test.coordinator"))
            #expect {
                try coordinator.run()
            } throws: { error in
                "\(error)".contains("tally")
            }
        }
    }
}
