import CZeroMQ
import Foundation

/// Whether a connecting socket has a working connection to its peer now, from libzmq's socket
/// monitor: a connection counts once its handshake succeeded (with CURVE: once the server
/// admitted the key) and until it is dropped.
///
/// A client uses it to tell a server that is slow to answer (connected: keep waiting) from
/// one that is not there or does not admit it (not connected: give up).
///
/// ```swift
/// let watch = try ConnectionWatch(socket)   // before socket.connect(...)
/// if try watch.isConnected { /* the peer is there, only busy */ }
/// ```
///
/// Like its socket, a watch belongs to one thread at a time.
public final class ConnectionWatch {
    private let events: ZMQSocket
    private var connections = 0
    private var dropped = 0
    private var closedEarly = 0

    /// Starts monitoring `socket` (call it before the socket connects, so that no event is
    /// missed), in the socket's context.
    public init(_ socket: ZMQSocket, context: ZMQContext) throws(ZMQError) {
        let endpoint = "inproc://tactus-monitor-\(UUID().uuidString)"
        let handle = try socket.openHandle("zmq_socket_monitor")
        let watched = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_MONITOR_STOPPED
        if zmq_socket_monitor(handle, endpoint, Int32(watched)) != 0 {
            throw ZMQError.last("zmq_socket_monitor")
        }
        events = try context.socket(.pair)
        try events.set(.linger(.zero))
        try events.connect(endpoint)
    }

    /// True while at least one connection to the peer has completed its handshake and not
    /// been dropped.
    public var isConnected: Bool {
        get throws(ZMQError) {
            try readEvents()
            return connections > 0
        }
    }

    /// How many connections have been dropped so far: a request sent before the count went up
    /// may have been lost with the connection (one sent before the first connection waits for
    /// it and is not lost).
    public var disconnections: Int {
        get throws(ZMQError) {
            try readEvents()
            return dropped
        }
    }

    /// How many connections the peer closed before their handshake completed: a server that
    /// allows no more connections from this address, or does not admit this client's key.
    public var closedBeforeHandshake: Int {
        get throws(ZMQError) {
            try readEvents()
            return closedEarly
        }
    }

    private func readEvents() throws(ZMQError) {
        // Each event is two frames: 2 bytes of event number and 4 of value, then the endpoint.
        while let frames = try events.tryReceive(maxFrames: 2) {
            guard let first = frames.first, first.count >= 2 else { continue }
            let event = Int32(first[0]) | Int32(first[1]) << 8
            if event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED {
                connections += 1
            } else if event == ZMQ_EVENT_DISCONNECTED {
                if connections == 0 { closedEarly += 1 }
                connections = max(connections - 1, 0)
                dropped += 1
            }
        }
    }
}

@available(*, unavailable)
extension ConnectionWatch: Sendable {}
