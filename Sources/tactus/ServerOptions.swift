import ArgumentParser
import Foundation
import TactusClient
import TactusProtocol

/// `--server` and `--timeout`, shared by the commands that talk to a coordinator.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The coordinator's frontend (default: $TACTUS_SERVER, else tcp://127.0.0.1:5555).", valueName: "endpoint"))
    var server: String?

    @Option(help: ArgumentHelp(
        "Seconds to wait for an answer; an unanswered request is sent once more, then fails.", valueName: "seconds"))
    var timeout = 2.5

    @OptionGroup var curve: CurveClientOptions

    /// The frontend to talk to.
    var endpoint: String {
        server ?? ProcessInfo.processInfo.environment["TACTUS_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? CoordinatorEndpoints.frontend
    }

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be above 0 and at most 3600 seconds.") }
        guard endpoint.contains("://") else {
            throw ValidationError("--server takes an endpoint such as tcp://HOST:PORT, not '\(endpoint)'.")
        }
    }

    /// A client of the frontend.
    func client() throws -> TactusClient {
        try TactusClient(server: endpoint, timeout: .milliseconds(Int64((timeout * 1000).rounded())), curve: curve.keys())
    }
}
