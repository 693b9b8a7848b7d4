import CZeroMQ
import Foundation

/// The connections a bound socket holds now, counted by the peer they come from, from libzmq's
/// socket monitor: a connection counts from the moment it is accepted (before its handshake)
/// until it is dropped. Its owner may refuse a connection as its acceptance is read.
///
/// A server uses it to limit how many connections one peer may hold: libzmq itself accepts
/// every connection, and each costs a file descriptor and some memory, from its acceptance on
/// (a peer that never sends its greeting is asked nothing, by ZAP or anyone else):
///
/// ```swift
/// let connections = try PeerConnections(frontend, context: context)   // before frontend.bind(...)
/// // whenever connections.eventSocket is readable:
/// try connections.readEvents { peer in connections.count(of: peer) <= limit }
/// ```
///
/// A connection refused is shut down (`shutdown(2)`, which libzmq sees as the peer leaving:
/// it closes the connection itself), once its descriptor is checked to still come from the
/// same peer: the events are read late, and a descriptor closed meanwhile may have been reused.
/// Like its socket, it belongs to one thread at a time.
public final class PeerConnections {
    /// The monitor's socket: readable when connections were accepted or dropped.
    public let eventSocket: ZMQSocket
    /// The peer group of each connection's file descriptor, while it is open.
    private var groupOfDescriptor: [Int32: String] = [:]
    private var counts: [String: Int] = [:]
    /// Connections dropped (by either side) since the count was last taken.
    private var droppedSinceTaken = 0

    /// Starts monitoring `socket` (call it before the socket binds, so that no connection is
    /// missed), in the socket's context.
    public init(_ socket: ZMQSocket, context: ZMQContext) throws(ZMQError) {
        let endpoint = "inproc://tactus-peers-\(UUID().uuidString)"
        let handle = try socket.openHandle("zmq_socket_monitor")
        if zmq_socket_monitor(handle, endpoint, Int32(ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED)) != 0 {
            throw ZMQError.last("zmq_socket_monitor")
        }
        eventSocket = try context.socket(.pair)
        try eventSocket.set(.linger(.zero))
        // No limit on the events waiting: a dropped disconnection would count a peer's
        // connection for ever (an inproc pipe's limit is 0, none, when either side's is).
        try eventSocket.set(.receiveHighWaterMark(0))
        try eventSocket.connect(endpoint)
    }

    /// The connections open from the peers of `group` (``PeerAddress/group(of:)``), as of the
    /// events read so far.
    public func count(of group: String) -> Int { counts[group] ?? 0 }

    /// The connections open from every peer, as of the events read so far.
    public var total: Int { groupOfDescriptor.count }

    /// Takes the monitor's waiting events into the counts; each connection accepted is counted,
    /// then shut down unless `admits` its peer's group.
    public func readEvents(admitting admits: (_ group: String) -> Bool = { _ in true }) throws(ZMQError) {
        // Each event is two frames: 2 bytes of event number and 4 of value (the connection's
        // file descriptor, in the machine's byte order), then the endpoint.
        while let frames = try eventSocket.tryReceive(maxFrames: 2) {
            guard let first = frames.first, first.count >= 6 else { continue }
            let event = Int32(first[0]) | Int32(first[1]) << 8
            let descriptor = first[2..<6].withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }
            // A descriptor closed and reused before its events were read is taken for its new
            // connection: the old one's count goes first.
            forget(descriptor)
            guard event == ZMQ_EVENT_ACCEPTED else {
                droppedSinceTaken += 1
                continue
            }
            let group = PeerAddress.group(ofConnection: descriptor)
            groupOfDescriptor[descriptor] = group
            counts[group, default: 0] += 1
            if !admits(group) && PeerAddress.group(ofConnection: descriptor) == group {
                shutdown(descriptor, Int32(SHUT_RDWR))
            }
        }
    }

    /// The connections dropped since the last call, as of the events read so far.
    public func takeDropped() -> Int {
        defer { droppedSinceTaken = 0 }
        return droppedSinceTaken
    }

    private func forget(_ descriptor: Int32) {
        guard let group = groupOfDescriptor.removeValue(forKey: descriptor) else { return }
        counts[group] = (counts[group] ?? 1) > 1 ? counts[group]! - 1 : nil
    }
}

@available(*, unavailable)
extension PeerConnections: Sendable {}

/// Which peers count as one: an IPv4 address, or the /64 network of an IPv6 address (a host is
/// given a whole /64, so its addresses count as one); an IPv4 address mapped into IPv6
/// (`::ffff:192.0.2.1`) counts as that IPv4 address.
public enum PeerAddress {
    /// The group of every peer without an IP address: a Unix socket's, an in-process one's.
    public static let local = "local"

    /// Whether `address` (an IP address as text) is this machine's loopback: 127.0.0.0/8, `::1`,
    /// or 127.x mapped into IPv6. Every local user has them all, so a share by address cannot
    /// tell this machine's users apart.
    public static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// The group of the peer at `address`, an IP address as text (what a ZAP request, libzmq's
    /// `Peer-Address` or a web server gives; an IPv6 zone, `%eth0`, is ignored); ``local`` for
    /// none or anything else.
    public static func group(of address: String?) -> String {
        guard let address else { return local }
        let host = address.split(separator: "%", maxSplits: 1).first.map(String.init) ?? address
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return group(v4: v4)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return group(v6: v6)
        }
        return local
    }

    /// The group of the peer of the connected socket `descriptor` (``local`` when it has none:
    /// not an IP socket, or closed meanwhile).
    static func group(ofConnection descriptor: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard found == 0 else { return local }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return group(v4: withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in.self) }.sin_addr)
        case AF_INET6:
            return group(v6: withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in6.self) }.sin6_addr)
        default:
            return local
        }
    }

    private static func group(v4: in_addr) -> String {
        withUnsafeBytes(of: v4) { $0.map(String.init).joined(separator: ".") }
    }

    private static func group(v6: in6_addr) -> String {
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        return bytes[0..<8].map { String(format: "%02x", $0) }.joined() + "::/64"
    }
}
