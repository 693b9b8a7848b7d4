import ArgumentParser
import Foundation
import TactusZMQ

/// `--curve-server-key` and `--curve-secret-key`, shared by the client commands and
/// `tactus worker`: what a CURVE client of a coordinator needs.
struct CurveClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The server's public certificate (server.key): talk to it over CURVE (default: $TACTUS_CURVE_SERVER_KEY).",
        valueName: "file"))
    var curveServerKey: String?

    @Option(help: ArgumentHelp(
        "This side's secret certificate (NAME.key_secret), whose public key the server authorized (default: $TACTUS_CURVE_SECRET_KEY).",
        valueName: "file"))
    var curveSecretKey: String?

    private var serverKeyFile: String? { curveServerKey ?? Self.environment("TACTUS_CURVE_SERVER_KEY") }
    private var secretKeyFile: String? { curveSecretKey ?? Self.environment("TACTUS_CURVE_SECRET_KEY") }

    func validate() throws {
        if (serverKeyFile == nil) != (secretKeyFile == nil) {
            throw ValidationError("--curve-server-key and --curve-secret-key go together")
        }
    }

    /// The keys, read from their files; nil without CURVE.
    func keys() throws -> CurveClientKeys? {
        guard let serverKeyFile, let secretKeyFile else { return nil }
        do {
            return try CurveClientKeys(serverKeyFile: serverKeyFile, secretKeyFile: secretKeyFile)
        } catch {
            throw CommandFailure("cannot read the CURVE keys: \(error)")
        }
    }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
