import ArgumentParser
import Foundation
import TactusZMQ

extension Tactus {
    /// `tactus keys`: CURVE key pairs for the server, its clients and its workers.
    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keys",
            abstract: "Make CURVE key pairs (certificates) for the server, clients and workers.",
            subcommands: [Generate.self]
        )
    }
}

extension Tactus.Keys {
    /// `tactus keys generate NAME [--out DIR]`.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write a new CURVE key pair as NAME.key (public) and NAME.key_secret (secret, mode 0600).",
            discussion: """
                The files use CZMQ's certificate format (ZPL text with the keys in Z85), which \
                pyzmq's zmq.auth.load_certificate also reads. Hand out NAME.key: the server's goes \
                to its clients and workers (--curve-server-key), a client's goes into the server's \
                --authorized-clients directory, a worker's into its --authorized-workers directory. NAME.key_secret stays with its owner \
                (--curve-secret-key). Existing files are never overwritten.

                With --json, one object: name, public_key (Z85), public_file, secret_file.
                """
        )

        @Argument(help: "The key pair's name: the files are NAME.key and NAME.key_secret.")
        var name: String

        @Option(help: ArgumentHelp("The directory to write into (default: the current directory).", valueName: "dir"))
        var out = "."

        @Flag(help: "Print the file paths and the public key as one JSON object.")
        var json = false

        func validate() throws {
            guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", !name.hasPrefix("-") else {
                throw ValidationError("NAME must be a plain file name, not '\(name)'.")
            }
        }

        func run() throws {
            let certificate: CurveCertificate
            let files: CurveCertificate.SavedFiles
            do {
                certificate = CurveCertificate(keyPair: try CurveKeyPair.generate())
                files = try certificate.save(name: name, in: out)
            } catch {
                throw CommandFailure("cannot write the key pair: \(error)")
            }
            if json {
                try Output.jsonLine(
                    GeneratedKeys(
                        name: name, publicKey: certificate.publicKey.z85, publicFile: files.publicPath, secretFile: files.secretPath))
            } else {
                print("public key \(certificate.publicKey.z85)")
                print("wrote \(files.publicPath) (public: give it to the other side)")
                print("wrote \(files.secretPath) (secret, mode 0600: keep it)")
            }
        }
    }
}

/// What `tactus keys generate --json` prints.
private struct GeneratedKeys: Encodable {
    var name: String
    var publicKey: String
    var publicFile: String
    var secretFile: String

    enum CodingKeys: String, CodingKey {
        case name
        case publicKey = "public_key"
        case publicFile = "public_file"
        case secretFile = "secret_file"
    }
}
