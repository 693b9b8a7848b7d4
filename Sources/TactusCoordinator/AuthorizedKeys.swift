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

    /// Exactly `keys`, read from no directory.
    init(keys: Set<CurveKey>) {
        directory = "(none)"
        self.keys = keys
    }

    /// Whether `key` may connect.
    public func admits(_ key: CurveKey) -> Bool {
        keys.contains(key)
    }
}

/// How the coordinator's sockets are secured: CURVE with the server's key pair, admitting
/// clients and workers by separate sets of keys (each a directory, reloaded on request,
/// `SIGHUP` in `tactus serve`). The frontend and the events socket admit client keys only, the
/// backend worker keys only, so a client's key cannot announce a detector and take other
/// clients' songs, and a worker's key cannot submit or read the library.
public struct CoordinatorSecurity: Sendable {
    /// Who a key admits.
    public enum Role: String, Sendable, CaseIterable {
        /// Clients: the frontend and the events.
        case client
        /// Workers: the backend.
        case worker

        /// The ZAP domain of the sockets of this role, which tells the ZAP handler who asks.
        public var zapDomain: String { "tactus-\(rawValue)s" }
    }

    /// The coordinator's own key pair (its public key is the clients' `--curve-server-key`).
    public var keyPair: CurveKeyPair
    /// The directory of the clients' public certificates (`*.key`).
    public var authorizedClientsDirectory: String
    /// The directory of the workers' public certificates (`*.key`); nil admits no worker but
    /// those of ``extraWorkerKeys``.
    public var authorizedWorkersDirectory: String?
    /// Worker keys admitted besides those of the directory (the local workers' key of `tactus serve`).
    public var extraWorkerKeys: Set<CurveKey>
    /// Client keys admitted besides those of the directory (the web gateway's key of `tactus serve`).
    public var extraClientKeys: Set<CurveKey>

    public init(
        keyPair: CurveKeyPair, authorizedClientsDirectory: String, authorizedWorkersDirectory: String?,
        extraWorkerKeys: Set<CurveKey> = [], extraClientKeys: Set<CurveKey> = []
    ) {
        self.keyPair = keyPair
        self.authorizedClientsDirectory = authorizedClientsDirectory
        self.authorizedWorkersDirectory = authorizedWorkersDirectory
        self.extraWorkerKeys = extraWorkerKeys
        self.extraClientKeys = extraClientKeys
    }

    func serverKeys(for role: Role) -> CurveServerKeys { CurveServerKeys(keyPair: keyPair, zapDomain: role.zapDomain) }

    func loadAuthorizedKeys() throws(CertificateError) -> [Role: AuthorizedKeys] {
        var keys = [Role.client: try AuthorizedKeys(directory: authorizedClientsDirectory, adding: extraClientKeys)]
        if let authorizedWorkersDirectory {
            keys[.worker] = try AuthorizedKeys(directory: authorizedWorkersDirectory, adding: extraWorkerKeys)
        } else {
            keys[.worker] = AuthorizedKeys(keys: extraWorkerKeys)
        }
        return keys
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
