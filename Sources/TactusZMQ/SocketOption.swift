import CZeroMQ

/// A socket option and its value, set with ``ZMQSocket/set(_:)``.
///
/// Durations are rounded up to whole milliseconds, as libzmq takes them.
public enum SocketOption: Sendable, Hashable {
    /// How long ``ZMQSocket/close()`` may keep delivering unsent messages (ZMQ_LINGER);
    /// nil waits forever, `.zero` discards them at once.
    case linger(Duration?)
    /// Messages queued for sending per peer before sends block or fail (ZMQ_SNDHWM); 0 is unlimited.
    case sendHighWaterMark(Int)
    /// Messages queued on receipt per peer before the peer is throttled (ZMQ_RCVHWM); 0 is unlimited.
    case receiveHighWaterMark(Int)
    /// The largest frame accepted from a peer, in bytes of content (ZMQ_MAXMSGSIZE): a peer
    /// that sends a larger one is disconnected and its message dropped. nil is unlimited. Not
    /// enforced over `inproc://`.
    ///
    /// libzmq measures a frame as it travels, and under CURVE a frame travels with
    /// ``curveFrameOverhead`` bytes more than its content; the option adds them, so a frame of
    /// exactly the limit is taken with and without CURVE (a plain-text frame up to that many
    /// bytes over it is taken too: decoders check exact sizes).
    case maxMessageSize(Int?)
    /// The identity a DEALER or REQ presents to a ROUTER (ZMQ_ROUTING_ID): 1 to 255 bytes, not
    /// starting with a zero byte. Set before connecting.
    case routingID([UInt8])
    /// A ROUTER fails sends to unknown routing ids with ``ZMQError/hostUnreachable`` instead of
    /// dropping them silently (ZMQ_ROUTER_MANDATORY).
    case routerMandatory(Bool)
    /// Interval of ZMTP heartbeats (PING) on each connection (ZMQ_HEARTBEAT_IVL); `.zero` disables.
    case heartbeatInterval(Duration)
    /// How long the peer may wait for our next heartbeat before dropping the connection
    /// (ZMQ_HEARTBEAT_TTL, at most 6553.5 s, sent in the PING).
    case heartbeatTimeToLive(Duration)
    /// How long to wait for traffic after a PING before dropping the connection (ZMQ_HEARTBEAT_TIMEOUT).
    case heartbeatTimeout(Duration)
    /// First wait before reconnecting a dropped connection (ZMQ_RECONNECT_IVL).
    case reconnectInterval(Duration)
    /// Upper bound of the exponentially growing reconnect wait (ZMQ_RECONNECT_IVL_MAX);
    /// `.zero` keeps the wait at ``reconnectInterval(_:)``.
    case reconnectIntervalMax(Duration)
    /// Queue messages only to completed connections (ZMQ_IMMEDIATE), so a DEALER does not
    /// queue requests for a peer that is not there.
    case immediate(Bool)
    /// How long a new connection may take to complete its ZMTP handshake before libzmq drops
    /// it (ZMQ_HANDSHAKE_IVL; libzmq's default is 30 s).
    case handshakeInterval(Duration)
    /// Whether the socket takes IPv6 addresses (ZMQ_IPV6; none does by default).
    case ipv6(Bool)
    /// A SUB receives messages whose first frame starts with this prefix (ZMQ_SUBSCRIBE);
    /// the empty prefix subscribes to everything.
    case subscribe([UInt8])
    /// Removes a subscription made with ``subscribe(_:)`` (ZMQ_UNSUBSCRIBE).
    case unsubscribe([UInt8])
    /// The socket is a CURVE server (ZMQ_CURVE_SERVER); it also needs ``curveSecretKey(_:)``.
    case curveServer(Bool)
    /// This socket's long-term public key (ZMQ_CURVE_PUBLICKEY); a CURVE client needs it.
    case curvePublicKey(CurveKey)
    /// This socket's long-term secret key (ZMQ_CURVE_SECRETKEY); a CURVE client and server need it.
    case curveSecretKey(CurveKey)
    /// The server's public key, which makes this socket a CURVE client (ZMQ_CURVE_SERVERKEY).
    case curveServerKey(CurveKey)
    /// The ZAP authentication domain of a server socket (ZMQ_ZAP_DOMAIN). With a ZAP handler
    /// bound at `inproc://zeromq.zap.01`, every connection is checked by it.
    case zapDomain(String)

    /// Bytes a frame carries over CURVE beyond its content (ZMTP 3.0 CURVE, RFC 26): the
    /// MESSAGE command's name (8), the short nonce (8), the flags byte inside the box (1) and
    /// the box's authenticator (16).
    public static let curveFrameOverhead = 33

    /// The libzmq name of the option, for error messages.
    var name: String {
        switch self {
        case .linger: "ZMQ_LINGER"
        case .sendHighWaterMark: "ZMQ_SNDHWM"
        case .receiveHighWaterMark: "ZMQ_RCVHWM"
        case .maxMessageSize: "ZMQ_MAXMSGSIZE"
        case .routingID: "ZMQ_ROUTING_ID"
        case .routerMandatory: "ZMQ_ROUTER_MANDATORY"
        case .heartbeatInterval: "ZMQ_HEARTBEAT_IVL"
        case .heartbeatTimeToLive: "ZMQ_HEARTBEAT_TTL"
        case .heartbeatTimeout: "ZMQ_HEARTBEAT_TIMEOUT"
        case .reconnectInterval: "ZMQ_RECONNECT_IVL"
        case .reconnectIntervalMax: "ZMQ_RECONNECT_IVL_MAX"
        case .immediate: "ZMQ_IMMEDIATE"
        case .handshakeInterval: "ZMQ_HANDSHAKE_IVL"
        case .ipv6: "ZMQ_IPV6"
        case .subscribe: "ZMQ_SUBSCRIBE"
        case .unsubscribe: "ZMQ_UNSUBSCRIBE"
        case .curveServer: "ZMQ_CURVE_SERVER"
        case .curvePublicKey: "ZMQ_CURVE_PUBLICKEY"
        case .curveSecretKey: "ZMQ_CURVE_SECRETKEY"
        case .curveServerKey: "ZMQ_CURVE_SERVERKEY"
        case .zapDomain: "ZMQ_ZAP_DOMAIN"
        }
    }

    func apply(to handle: UnsafeMutableRawPointer) throws(ZMQError) {
        switch self {
        case .linger(let duration): try set(handle, ZMQ_LINGER, int: duration.map(Milliseconds.rounding) ?? -1)
        case .sendHighWaterMark(let count): try set(handle, ZMQ_SNDHWM, int: count)
        case .receiveHighWaterMark(let count): try set(handle, ZMQ_RCVHWM, int: count)
        case .maxMessageSize(let bytes):
            var value = bytes.map { Int64($0) + Int64(Self.curveFrameOverhead) } ?? -1
            try set(handle, ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size)
        case .routingID(let bytes): try set(handle, ZMQ_ROUTING_ID, bytes: bytes)
        case .routerMandatory(let on): try set(handle, ZMQ_ROUTER_MANDATORY, int: on ? 1 : 0)
        case .heartbeatInterval(let interval): try set(handle, ZMQ_HEARTBEAT_IVL, int: Milliseconds.rounding(interval))
        case .heartbeatTimeToLive(let ttl): try set(handle, ZMQ_HEARTBEAT_TTL, int: Milliseconds.rounding(ttl))
        case .heartbeatTimeout(let timeout): try set(handle, ZMQ_HEARTBEAT_TIMEOUT, int: Milliseconds.rounding(timeout))
        case .reconnectInterval(let interval): try set(handle, ZMQ_RECONNECT_IVL, int: Milliseconds.rounding(interval))
        case .reconnectIntervalMax(let interval): try set(handle, ZMQ_RECONNECT_IVL_MAX, int: Milliseconds.rounding(interval))
        case .immediate(let on): try set(handle, ZMQ_IMMEDIATE, int: on ? 1 : 0)
        case .handshakeInterval(let interval): try set(handle, ZMQ_HANDSHAKE_IVL, int: Milliseconds.rounding(interval))
        case .ipv6(let on): try set(handle, ZMQ_IPV6, int: on ? 1 : 0)
        case .subscribe(let prefix): try set(handle, ZMQ_SUBSCRIBE, bytes: prefix)
        case .unsubscribe(let prefix): try set(handle, ZMQ_UNSUBSCRIBE, bytes: prefix)
        case .curveServer(let on): try set(handle, ZMQ_CURVE_SERVER, int: on ? 1 : 0)
        case .curvePublicKey(let key): try set(handle, ZMQ_CURVE_PUBLICKEY, bytes: key.bytes)
        case .curveSecretKey(let key): try set(handle, ZMQ_CURVE_SECRETKEY, bytes: key.bytes)
        case .curveServerKey(let key): try set(handle, ZMQ_CURVE_SERVERKEY, bytes: key.bytes)
        case .zapDomain(let domain): try set(handle, ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8))
        }
    }

    private func set(_ handle: UnsafeMutableRawPointer, _ option: Int32, int: Int) throws(ZMQError) {
        var value = Int32(clamping: int)
        try set(handle, option, &value, MemoryLayout<Int32>.size)
    }

    private func set(_ handle: UnsafeMutableRawPointer, _ option: Int32, bytes: [UInt8]) throws(ZMQError) {
        let result = bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        if result != 0 { throw ZMQError.last("zmq_setsockopt \(name)") }
    }

    private func set(_ handle: UnsafeMutableRawPointer, _ option: Int32, _ value: UnsafeRawPointer, _ size: Int) throws(ZMQError) {
        if zmq_setsockopt(handle, option, value, size) != 0 { throw ZMQError.last("zmq_setsockopt \(name)") }
    }
}
