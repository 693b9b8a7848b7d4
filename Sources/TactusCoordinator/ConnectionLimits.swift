import Logging
import TactusZMQ

/// How many connections one peer may hold to the coordinator's sockets: libzmq accepts every
/// connection, and each costs the coordinator a file descriptor and about 25 KB, so without a
/// limit one client holding idle connections (20,000 of them on a machine whose limit is
/// 20,000 descriptors) left none for anyone else, nor for the coordinator's own files.
///
/// A peer is an IPv4 address or an IPv6 /64 network (``PeerAddress``). Its connections are
/// counted per role: the frontend and the events socket together for clients, the backend for
/// workers. The ZAP handler (``ConnectionAdmission``) asks ``refusal(address:role:logger:)``
/// during each connection's handshake, and refuses one that would take its peer over
/// ``perPeer`` with ZAP status 300 (try again later): libzmq then drops it. A connection that never completes its handshake
/// is dropped by libzmq after ``ConnectionAdmission/handshakeTimeout``.
final class ConnectionLimits {
    /// Connections one peer may hold to the sockets of one role.
    let perPeer: Int
    private let watches: [(role: CoordinatorSecurity.Role, connections: PeerConnections)]
    /// Peers refused and not yet back under the limit: each is logged once when refused.
    private var refusing: Set<String> = []
    /// Peers remembered in ``refusing`` at most (past it, the set starts again).
    private static let maximumRefusing = 4096

    /// Starts counting the connections of `sockets` (before they bind).
    init(perPeer: Int, sockets: [(ZMQSocket, CoordinatorSecurity.Role)], context: ZMQContext) throws(ZMQError) {
        precondition(perPeer > 0)
        self.perPeer = perPeer
        var watches: [(role: CoordinatorSecurity.Role, connections: PeerConnections)] = []
        for (socket, role) in sockets {
            watches.append((role, try PeerConnections(socket, context: context)))
        }
        self.watches = watches
    }

    /// Why a connection from `address` (a ZAP request's) to a socket of `role` is refused; nil
    /// when it is admitted. The connection asking is already counted.
    func refusal(address: String, role: CoordinatorSecurity.Role, logger: Logger) -> String? {
        let peer = PeerAddress.group(of: address)
        let open: Int
        do {
            open = try watches.filter { $0.role == role }.reduce(0) { $0 + (try $1.connections.count(of: peer)) }
        } catch {
            // Without counts the limit cannot be kept; refusing everyone would be worse.
            logger.error("cannot count the connections", metadata: ["error": "\(error)"])
            return nil
        }
        guard open > perPeer else {
            refusing.remove(peer)
            return nil
        }
        if !refusing.contains(peer) {
            if refusing.count >= Self.maximumRefusing { refusing.removeAll() }
            refusing.insert(peer)
            logger.warning(
                "refusing connections: one peer holds too many",
                metadata: ["peer": "\(peer)", "as": "\(role.rawValue)", "open": "\(open - 1)", "limit": "\(perPeer)"])
        }
        return "too many connections from \(peer) (\(perPeer) at most)"
    }

    /// Takes the waiting connection events into the counts (the loop calls it on every turn,
    /// so that they do not pile up between handshakes).
    func readEvents(logger: Logger) {
        for watch in watches {
            do {
                try watch.connections.readEvents()
            } catch {
                logger.error("cannot count the connections", metadata: ["error": "\(error)"])
            }
        }
    }
}

@available(*, unavailable)
extension ConnectionLimits: Sendable {}
