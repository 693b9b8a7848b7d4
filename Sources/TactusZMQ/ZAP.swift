import CZeroMQ

/// The ZeroMQ Authentication Protocol (ZAP, RFC 27): how a server socket with a
/// ``SocketOption/zapDomain(_:)`` asks a handler in the same context whether to admit a peer.
///
/// The handler is a REP socket bound at ``endpoint`` that answers each ``ZAPRequest`` with
/// ``ZAPRequest/reply(_:text:userID:)``:
///
/// ```swift
/// let handler = try context.socket(.rep)
/// try handler.bind(ZAP.endpoint)          // before the server socket binds
/// while let frames = try handler.receive(timeout: .seconds(1)) {
///     let request = try ZAPRequest(frames: frames)
///     let admitted = request.curvePublicKey.map(authorizedKeys.contains) ?? false
///     try handler.send(request.reply(admitted ? .success : .authenticationFailure))
/// }
/// ```
public enum ZAP {
    /// Where libzmq sends ZAP requests.
    public static let endpoint = "inproc://zeromq.zap.01"
    static let version: [UInt8] = Array("1.0".utf8)
}

/// A handler's verdict on a connection.
public enum ZAPStatus: String, Sendable, Hashable {
    /// Admit the peer.
    case success = "200"
    /// Refuse for now; the peer may retry.
    case temporaryError = "300"
    /// Refuse: the credentials are not accepted.
    case authenticationFailure = "400"
    /// Refuse: the handler failed.
    case internalError = "500"
}

/// One ZAP request, as a REP handler receives it (the REP socket strips the envelope).
public struct ZAPRequest: Sendable, Hashable {
    public var requestID: [UInt8]
    /// The server socket's ``SocketOption/zapDomain(_:)``.
    public var domain: String
    /// The peer's address (an IP address for TCP).
    public var address: String
    /// The peer's routing id, if it set one.
    public var routingID: [UInt8]
    /// `NULL`, `PLAIN` or `CURVE`.
    public var mechanism: String
    /// The mechanism's credentials: for CURVE, one frame with the client's public key.
    public var credentials: [[UInt8]]

    /// Reads a request; fails with `EPROTO` when the frames are not a ZAP 1.0 request.
    public init(frames: [[UInt8]]) throws(ZMQError) {
        guard frames.count >= 6, frames[0] == ZAP.version else {
            throw ZMQError(code: Int32(EPROTO), operation: "not a ZAP 1.0 request (\(frames.count) frames)")
        }
        requestID = frames[1]
        domain = String(decoding: frames[2], as: UTF8.self)
        address = String(decoding: frames[3], as: UTF8.self)
        routingID = frames[4]
        mechanism = String(decoding: frames[5], as: UTF8.self)
        credentials = Array(frames.dropFirst(6))
    }

    /// The client's long-term public key, for a CURVE request.
    public var curvePublicKey: CurveKey? {
        guard mechanism == "CURVE", credentials.count == 1 else { return nil }
        return try? CurveKey(bytes: credentials[0])
    }

    /// The reply frames: the status, a text for logs, and the user id libzmq attaches to the
    /// peer's messages (as the `User-Id` property).
    public func reply(_ status: ZAPStatus, text: String = "", userID: String = "") -> [[UInt8]] {
        [ZAP.version, requestID, Array(status.rawValue.utf8), Array(text.utf8), Array(userID.utf8), []]
    }
}
