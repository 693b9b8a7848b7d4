import ArgumentParser
import Foundation
import TactusClient
import TactusModel
import TactusProtocol

/// `--server` and `--timeout`, shared by the commands that talk to a coordinator.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The coordinator's frontend (default: $TACTUS_SERVER, else tcp://127.0.0.1:5555).", valueName: "endpoint"))
    var server: String?

    @Option(help: ArgumentHelp(
        "Seconds to wait for an answer. A server that is not connected by then gets the request once more, then it "
            + "fails; one that is connected but slow (a loaded machine) is waited for, with a message after each "
            + "wait, up to --patience.", valueName: "seconds"))
    var timeout = 2.5

    @Option(help: ArgumentHelp(
        "Seconds to wait for a server that is connected but does not answer before giving up.", valueName: "seconds"))
    var patience = 900.0

    @OptionGroup var curve: CurveClientOptions

    /// The frontend to talk to.
    var endpoint: String {
        server ?? ProcessInfo.processInfo.environment["TACTUS_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? CoordinatorEndpoints.frontend
    }

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be above 0 and at most 3600 seconds.") }
        guard patience > 0, patience <= 86_400 else { throw ValidationError("--patience must be above 0 and at most 86400 seconds.") }
        guard endpoint.contains("://") else {
            throw ValidationError("--server takes an endpoint such as tcp://HOST:PORT, not '\(endpoint)'.")
        }
    }

    /// A client of the frontend, saying on standard error when the server is slow to answer.
    func client() throws -> TactusClient {
        let client = try TactusClient(server: endpoint, timeout: .milliseconds(Int64((timeout * 1000).rounded())), curve: curve.keys())
        client.patience = .milliseconds(Int64((patience * 1000).rounded()))
        let server = endpoint
        let erase = isatty(STDERR_FILENO) == 1 ? "\r\u{1B}[K" : ""
        client.onSlowAnswer = { command, waited in
            let message = "\(server) has not answered '\(command)' for \(Int(waited.seconds.rounded())) s; it is "
                + "connected (busy, not gone), so tactus keeps waiting (Ctrl-C to stop)"
            FileHandle.standardError.write(Data((erase + ShownText.escaped(message) + "\n").utf8))
        }
        return client
    }
}
