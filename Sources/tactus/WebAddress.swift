import Foundation
import TactusWeb

/// A `HOST:PORT` to listen on over HTTP, checked: loopback, or a token, or `--insecure`.
struct WebAddress {
    var host: String
    var port: Int

    /// `address` as `--web`/`--listen` take it; `option` names the option in errors.
    init(_ address: String, option: String) throws {
        guard let (host, port) = WebConfiguration.parseAddress(address) else {
            throw CommandFailure("\(option) takes HOST:PORT (such as 127.0.0.1:8080 or [::1]:8080), not '\(address)'")
        }
        self.host = host
        self.port = port
    }

    /// Refuses a non-loopback address without a token, unless `insecure`.
    func checkAccess(token: Bool, insecure: Bool, option: String) throws {
        guard !WebConfiguration.isLoopback(host), !token, !insecure else { return }
        throw CommandFailure(
            "\(option) \(host):\(port) is reachable from other machines: give --web-token-file FILE (a token of at least "
                + "16 characters that every request must carry) or --insecure")
    }

    /// Whether the address can be listened on now (binds a socket and closes it), with the
    /// system's reason when not.
    func probe() -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
            return "cannot resolve \(host)"
        }
        defer { freeaddrinfo(result) }
        let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return String(cString: strerror(errno)) }
        return nil
    }
}
