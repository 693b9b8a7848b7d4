import Foundation
import TactusZMQ

/// How `tactus web` (or the gateway `tactus serve` starts) listens and whom it talks to.
public struct WebConfiguration: Sendable {
    /// The host to bind (`127.0.0.1`, `::1`, `0.0.0.0`...).
    public var host: String
    /// The port to bind; 0 lets the system choose one.
    public var port: Int
    /// The coordinator's frontend.
    public var frontend: String
    /// The coordinator's events socket.
    public var events: String
    /// The CURVE keys of the gateway's sockets, nil without CURVE.
    public var curve: CurveClientKeys?
    /// The token a request must carry (bearer or cookie); nil: none is asked for.
    public var token: String?
    /// Host names the gateway answers besides its address (and, on loopback, `localhost`): ``AllowedHosts``.
    public var allowedHosts: [String]
    /// The largest song an upload may carry, in bytes.
    public var maxUploadBytes: Int
    /// How many uploads the gateway receives and forwards at once (more: 429 `busy`).
    public var maxUploads: Int
    /// How many bytes of uploads the gateway holds at once, spooled or on their way to the
    /// coordinator (more: 429 `busy`).
    public var maxUploadBytesInFlight: Int
    /// Where uploads are spooled (as files removed at once, gone with the gateway).
    public var spoolDirectory: String
    /// How long a request to the coordinator may wait for its answer.
    public var timeout: Duration
    /// Where the listening address is written once bound (a JSON object `{"url": ...}`), if anywhere.
    public var announceFile: String?
    /// How many HTTP connections are held at once, in all and from one address (an IPv4 address
    /// or an IPv6 /64); a connection beyond its address's share is closed as it opens, one beyond
    /// all takes the place of a connection without a request in progress (``HTTPConnectionPlaces``).
    public var maxConnections: Int
    public var maxConnectionsPerAddress: Int

    public init(
        host: String = "127.0.0.1", port: Int = 8080, frontend: String, events: String, curve: CurveClientKeys? = nil,
        token: String? = nil, allowedHosts: [String] = [], maxUploadBytes: Int = 256 << 20, maxUploads: Int = 4,
        maxUploadBytesInFlight: Int = 1 << 30, spoolDirectory: String = FileManager.default.temporaryDirectory.path,
        timeout: Duration = .seconds(10), announceFile: String? = nil, maxConnections: Int = 2048,
        maxConnectionsPerAddress: Int = 512
    ) {
        self.host = host
        self.port = port
        self.frontend = frontend
        self.events = events
        self.curve = curve
        self.token = token
        self.allowedHosts = allowedHosts
        self.maxUploadBytes = maxUploadBytes
        self.maxUploads = maxUploads
        self.maxUploadBytesInFlight = maxUploadBytesInFlight
        self.spoolDirectory = spoolDirectory
        self.timeout = timeout
        self.announceFile = announceFile
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// `HOST:PORT` (`[::1]:8080` for IPv6) as `--web` takes it.
    public static func parseAddress(_ address: String) -> (host: String, port: Int)? {
        let host: Substring
        let port: Substring
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]"), address[address.index(after: close)...].hasPrefix(":") else { return nil }
            host = address[address.index(after: address.startIndex)..<close]
            port = address[address.index(close, offsetBy: 2)...]
        } else {
            guard let colon = address.lastIndex(of: ":"), !address[..<colon].contains(":") else { return nil }
            host = address[..<colon]
            port = address[address.index(after: colon)...]
        }
        guard !host.isEmpty, let number = Int(port), (0...65535).contains(number) else { return nil }
        return (String(host), number)
    }

    /// Whether `host` is reachable from this machine only (127.0.0.0/8, `::1`, `localhost`).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Reads a token file: its first line, which must hold at least 16 characters and no spaces.
    public static func readToken(file: String) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw WebSetupError("cannot read the token file \(file): \(error.localizedDescription)")
        }
        let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard token.count >= 16, !token.contains(where: { $0.isWhitespace || $0 == ";" || $0 == "," }),
            token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw WebSetupError(
                "the token file \(file) must hold a token of at least 16 printable ASCII characters on its first line "
                    + "(no spaces, commas or semicolons), such as the output of `openssl rand -hex 24`")
        }
        return token
    }
}

/// Why the gateway cannot start.
public struct WebSetupError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
