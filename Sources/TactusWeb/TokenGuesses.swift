import Foundation
import Logging
import NIOCore
import Synchronization
import TactusZMQ

/// Wrong tokens, counted by the client that sent them: after ``allowed`` wrong tokens within
/// ``window`` from one client, that client's further tries (with a bearer token or the login
/// form) are answered 429 `busy`, with the seconds to wait, without being checked, until its
/// oldest counted failure is ``window`` old; a right token clears the client's count. A client is an IPv4 address, or
/// the /64 network of an IPv6 one (a host is given a whole /64, so its addresses count as one).
///
/// Without this, a client could try about 1,200 tokens a second. With it, each client gets 10
/// a minute; a session cookie, which is not a token, is never counted nor refused. Behind a
/// reverse proxy every request comes from the proxy, so a client guessing there also refuses
/// the tokens of the others for up to a minute (their sessions still work).
final class TokenGuesses: Sendable {
    static let allowed = 10
    static let window: Duration = .seconds(60)
    /// Clients remembered at most; beyond, the one whose last failure is oldest is forgotten.
    static let maximumClients = 4096

    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])

    /// What a token presented by a client came to.
    enum Outcome {
        case right
        case wrong
        /// Not checked: the client has used its tries; the answer says for how long.
        case refused(HTTPFailure)
    }

    /// Checks `presented` against `token` (in constant time) unless the client at `address`
    /// has used its tries; counts a wrong one, and logs a warning when a client uses its last.
    func check(_ presented: String, against token: String, from address: SocketAddress?, logger: Logger) -> Outcome {
        let client = Self.client(address)
        let now = ContinuousClock.now
        if let until = refusedUntil(client, now: now) {
            let seconds = max(1, Int(((until - now) / .seconds(1)).rounded(.up)))
            return .refused(HTTPFailure(
                .tooManyRequests, .busy,
                "too many wrong tokens from this client (\(Self.allowed) a minute): try again in \(seconds) s",
                retryAfterMs: seconds * 1000))
        }
        guard AccessMiddleware.constantTimeEqual(presented, token) else {
            if failed(client, now: now) == Self.allowed {
                logger.warning(
                    "wrong web tokens: this client's next tries are refused for up to a minute",
                    metadata: ["client": "\(client)", "failures": "\(Self.allowed)"])
            }
            return .wrong
        }
        succeeded(client)
        return .right
    }

    /// When `client` may try a token again, if it has used its tries (`nil`: it may try now).
    func refusedUntil(_ client: String, now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant? {
        failures.withLock { failures in
            guard let times = failures[client]?.filter({ now - $0 < Self.window }) else { return nil }
            failures[client] = times.isEmpty ? nil : times
            return times.count >= Self.allowed ? times[times.count - Self.allowed] + Self.window : nil
        }
    }

    /// Counts a wrong token from `client`; the number of its failures in the window, this one included.
    @discardableResult
    func failed(_ client: String, now: ContinuousClock.Instant = .now) -> Int {
        failures.withLock { failures in
            var times = (failures[client] ?? []).filter { now - $0 < Self.window }
            times.append(now)
            failures[client] = times
            if failures.count > Self.maximumClients,
                let stalest = failures.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key
            {
                failures[stalest] = nil
            }
            return times.count
        }
    }

    /// Forgets `client`'s failures: it gave the right token.
    func succeeded(_ client: String) {
        _ = failures.withLock { $0.removeValue(forKey: client) }
    }

    /// The client an address counts as (``PeerAddress/group(of:)``: an IPv4 address, or an
    /// IPv6 address's /64 network); ``PeerAddress/local`` for a Unix socket or no address.
    static func client(_ address: SocketAddress?) -> String {
        PeerAddress.group(of: address?.ipAddress)
    }
}
