import Foundation
import Logging
import TactusZMQ

/// How many connections one peer, and everyone, may hold to the coordinator's sockets: libzmq
/// accepts every connection, and each costs the coordinator a file descriptor and about 25 KB
/// from its acceptance on, so without a limit one client holding idle connections (20,000 of
/// them on a machine whose limit is 20,000 descriptors) left none for anyone else, nor for the
/// coordinator's own files.
///
/// A peer is an IPv4 address or an IPv6 /64 network (``PeerAddress``). Connections are counted
/// per role: the frontend and the events socket together for clients, the backend for workers.
/// As each connection's acceptance is read (at once: the loop polls ``eventSockets``), one that
/// takes its peer over ``perPeer``, or its role over ``perRole``, is shut down before its
/// handshake; the peer's libzmq connects again later. Connections over a Unix socket (`ipc://`,
/// whose file's permissions say who may connect) are not limited.
final class ConnectionLimits {
    /// Connections one peer may hold to the sockets of one role.
    let perPeer: Int
    /// Connections all peers together may hold to the sockets of one role: a third of the
    /// process's descriptors (at least ``perPeer``), so that clients and workers together leave
    /// a third for the library, uploads and the coordinator's own work whatever comes in; for
    /// workers, at most the `workerConnections` given.
    let perRole: [CoordinatorSecurity.Role: Int]
    private let watches: [(role: CoordinatorSecurity.Role, connections: PeerConnections)]
    /// Peers (and roles, as "role:") refused and not yet back under their limit: each is
    /// logged once when refused.
    private var refusing: Set<String> = []
    /// Entries of ``refusing`` kept at most (past it, the set starts again).
    private static let maximumRefusing = 4096

    /// Starts counting the connections of `sockets` (before they bind).
    init(
        perPeer: Int, workerConnections: Int, sockets: [(ZMQSocket, CoordinatorSecurity.Role)], context: ZMQContext
    ) throws(ZMQError) {
        precondition(perPeer > 0 && workerConnections > 0)
        self.perPeer = perPeer
        let third = max(perPeer, Self.descriptorLimit / 3)
        perRole = [.client: third, .worker: min(third, workerConnections)]
        var watches: [(role: CoordinatorSecurity.Role, connections: PeerConnections)] = []
        for (socket, role) in sockets {
            watches.append((role, try PeerConnections(socket, context: context)))
        }
        self.watches = watches
    }

    /// The sockets that become readable when connections are accepted or dropped.
    var eventSockets: [ZMQSocket] { watches.map(\.connections.eventSocket) }

    /// The connections dropped since the last call, as of the events read so far.
    func takeDropped() -> Int {
        watches.reduce(0) { $0 + $1.connections.takeDropped() }
    }

    /// The process's limit on open descriptors (`RLIMIT_NOFILE`, the soft one).
    static var descriptorLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1 << 20 }
        return Int(clamping: min(limit.rlim_cur, 1 << 20))
    }

    /// Takes the waiting connection events into the counts, shutting down the connections that
    /// take their peer or their role over its limit.
    func readEvents(logger: Logger) {
        for watch in watches {
            do {
                try watch.connections.readEvents { peer in admits(peer, role: watch.role, logger: logger) }
            } catch {
                logger.error("cannot count the connections", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Whether the connection just accepted from `peer` (already counted) keeps its peer and
    /// its role within their limits.
    private func admits(_ peer: String, role: CoordinatorSecurity.Role, logger: Logger) -> Bool {
        guard peer != PeerAddress.local else { return true }
        let sameRole = watches.filter { $0.role == role }.map(\.connections)
        let open = sameRole.reduce(0) { $0 + $1.count(of: peer) }
        // The workers' cap bounds the frames of workers beyond this machine's Unix sockets: the
        // local workers do not count against it (they count against the descriptors' third).
        let uncounted = role == .worker ? sameRole.reduce(0) { $0 + $1.count(of: PeerAddress.local) } : 0
        let all = sameRole.reduce(0) { $0 + $1.total } - uncounted
        let perRole = self.perRole[role] ?? perPeer
        if open > perPeer {
            refused(peer, metadata: ["peer": "\(peer)", "open": "\(open - 1)", "limit": "\(perPeer)"], role: role, logger: logger)
            return false
        }
        refusing.remove(peer)
        if all > perRole {
            refused("role:" + role.rawValue, metadata: ["open": "\(all - 1)", "limit": "\(perRole)"], role: role, logger: logger)
            return false
        }
        refusing.remove("role:" + role.rawValue)
        return true
    }

    private func refused(_ key: String, metadata: Logger.Metadata, role: CoordinatorSecurity.Role, logger: Logger) {
        guard !refusing.contains(key) else { return }
        if refusing.count >= Self.maximumRefusing { refusing.removeAll() }
        refusing.insert(key)
        logger.warning(
            key.hasPrefix("role:") ? "refusing connections: the server holds as many as it may" : "refusing connections: one peer holds too many",
            metadata: metadata.merging(["as": "\(role.rawValue)"]) { $1 })
    }
}

@available(*, unavailable)
extension ConnectionLimits: Sendable {}
