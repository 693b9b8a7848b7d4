import Foundation
import TactusModel

/// The `Host` names the gateway answers to. A page of another site can make a browser send
/// requests here by making its own name resolve to this machine (DNS rebinding); such requests
/// carry that site's name as their `Host`, which no script can change. So the gateway answers
/// only the names it is reached by on purpose:
///
/// - the address it listens on (`127.0.0.1`, `[::1]`, `192.168.1.5`, or the name given to
///   `--listen`);
/// - on loopback, also `localhost`, `127.0.0.1` and `[::1]`;
/// - on every interface (`0.0.0.0`, `::`), also `localhost` and any IP address: a rebinding page
///   always has a name, and the addresses the machine is reached by (its interfaces, a NAT, a
///   container's published port) are not known in advance;
/// - the names given with `--allowed-host` (the name of a reverse proxy that keeps `Host`).
///
/// The port is not compared (a proxy or a published port may change it). A request without a
/// `Host` comes from no browser, and is answered.
public struct AllowedHosts: Sendable {
    private let names: Set<String>
    private let anyAddress: Bool

    /// The names of a gateway listening on `host`, and `extra` names.
    public init(listeningOn host: String, extra: [String] = []) {
        let bound = Self.literal(host.lowercased())
        var names = Set(extra.map { Self.literal($0.lowercased()) })
        names.insert(bound)
        anyAddress = bound == "0.0.0.0" || bound == "[::]"
        if anyAddress || WebConfiguration.isLoopback(host) {
            names.formUnion(["localhost", "127.0.0.1", "[::1]"])
        }
        self.names = names
    }

    /// Whether a request whose `Host` is `authority` (`HOST` or `HOST:PORT`) is answered.
    public func allows(_ authority: String?) -> Bool {
        guard let authority else { return true }
        guard let host = Self.host(ofAuthority: authority) else { return false }
        return names.contains(host) || (anyAddress && Self.isAddress(host))
    }

    /// What is wrong with the names given to `--allowed-host`, if anything.
    public static func problem(withNames names: [String]) -> String? {
        guard let wrong = names.first(where: { !isValidName($0) }) else { return nil }
        return "takes a host name or an IP address without a port, not '\(ShownText.escaped(wrong))'"
    }

    /// Whether `name` is a host name or an IP address, without a port.
    static func isValidName(_ name: String) -> Bool {
        let host = literal(name.lowercased())
        guard Self.host(ofAuthority: host) == host else { return false }
        return isAddress(host)
            || host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                !label.isEmpty && label.count <= 63 && label.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || isAlphanumeric($0) }
            }
    }

    /// The host of `HOST[:PORT]` or `[IPV6][:PORT]`, lowercased; nil when malformed.
    static func host(ofAuthority authority: String) -> String? {
        let text = authority.lowercased()
        let host: Substring
        let rest: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            rest = text[text.index(after: close)...]
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            rest = text[colon...]
        } else {
            host = text[...]
            rest = ""
        }
        guard !host.isEmpty, rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }) else { return nil }
        return String(host)
    }

    /// An IPv6 address in brackets, as it appears in `Host`; anything else as it is.
    private static func literal(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// Whether `host` is an IPv4 address or a bracketed IPv6 address.
    private static func isAddress(_ host: String) -> Bool {
        var buffer = in6_addr()
        if host.hasPrefix("[") && host.hasSuffix("]") {
            return inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &buffer) == 1
        }
        return inet_pton(AF_INET, host, &buffer) == 1
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
