import Foundation
import TactusZMQ

/// The public keys allowed to connect to a CURVE coordinator: those of every public
/// certificate (`*.key`) in a directory, as `tactus keys generate` writes them, plus keys the
/// coordinator adds itself (its local workers').
///
/// Secret certificates (`*.key_secret`) in the directory are ignored, and so is any file that
/// is not a readable certificate; each such file is reported in ``problems``.
public struct AuthorizedKeys: Sendable {
    /// The directory read.
    public let directory: String
    /// The keys admitted.
    public private(set) var keys: Set<CurveKey>
    /// The `*.key` files that could not be read, with why.
    public private(set) var problems: [CertificateError] = []

    /// Reads every `*.key` file in `directory`; fails only when the directory cannot be listed.
    public init(directory: String, adding extra: Set<CurveKey> = []) throws(CertificateError) {
        self.directory = directory
        keys = extra
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CertificateError(path: directory, problem: "cannot list the authorized keys directory")
        }
        for name in names.sorted() where name.hasSuffix(".key") {
            let path = (directory as NSString).appendingPathComponent(name)
            do throws(CertificateError) {
                keys.insert(try CurveCertificate(contentsOf: path).publicKey)
            } catch {
                problems.append(error)
            }
        }
    }

    /// Whether `key` may connect.
    public func admits(_ key: CurveKey) -> Bool {
        keys.contains(key)
    }
}

/// How the coordinator's sockets are secured: CURVE with the server's key pair, admitting
/// the keys of a directory (reloaded on request, `SIGHUP` in `tactus serve`).
public struct CoordinatorSecurity: Sendable {
    /// The coordinator's own key pair (its public key is the clients' `--curve-server-key`).
    public var keyPair: CurveKeyPair
    /// The directory of authorized public certificates (`*.key`).
    public var authorizedKeysDirectory: String
    /// Keys admitted besides those of the directory (the local workers' key of `tactus serve`).
    public var extraAuthorizedKeys: Set<CurveKey>

    /// The ZAP domain of every coordinator socket.
    public static let zapDomain = "tactus"

    public init(keyPair: CurveKeyPair, authorizedKeysDirectory: String, extraAuthorizedKeys: Set<CurveKey> = []) {
        self.keyPair = keyPair
        self.authorizedKeysDirectory = authorizedKeysDirectory
        self.extraAuthorizedKeys = extraAuthorizedKeys
    }

    var serverKeys: CurveServerKeys { CurveServerKeys(keyPair: keyPair, zapDomain: Self.zapDomain) }

    func loadAuthorizedKeys() throws(CertificateError) -> AuthorizedKeys {
        try AuthorizedKeys(directory: authorizedKeysDirectory, adding: extraAuthorizedKeys)
    }
}

/// Which addresses a coordinator may bind without CURVE: those only this machine reaches.
public enum BindAddress {
    /// Whether `endpoint` is reachable from this machine only: `inproc://`, `ipc://`, and
    /// `tcp://` on 127.0.0.0/8, `::1` or `localhost`. Wildcards (`*`, `0.0.0.0`, `::`),
    /// other addresses and interface names are not.
    public static func isLoopback(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("inproc://") || endpoint.hasPrefix("ipc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        var host = String(endpoint.dropFirst("tcp://".count))
        // A source address (`tcp://SRC;DST`) does not apply to bind; the host ends at the port.
        if let semicolon = host.lastIndex(of: ";") { host = String(host[host.index(after: semicolon)...]) }
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
