import CZeroMQ

/// A failed libzmq call: the `errno` it set, libzmq's text for it (`zmq_strerror`), and the
/// operation that failed (`bind tcp://127.0.0.1:5555`).
///
/// Compare ``code`` with the constants below (or with POSIX `errno` values) to react to a
/// particular failure:
///
/// ```swift
/// do { try socket.send(frames) }
/// catch let error where error.code == ZMQError.hostUnreachable { /* peer gone */ }
/// ```
public struct ZMQError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let code: Int32
    /// What was being done, with its argument when useful for diagnosis.
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// The error libzmq reports for the calling thread's last failed call.
    static func last(_ operation: @autoclosure () -> String) -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation())
    }

    /// libzmq's description of ``code``.
    public var message: String { String(cString: zmq_strerror(code)) }

    public var description: String { "\(operation): \(message) (errno \(code))" }

    /// The context was shut down or terminated: the socket must be closed, and the thread
    /// that owns it should stop.
    public var isTerminated: Bool { code == Self.terminated }

    /// libzmq could not allocate memory (`ENOMEM`), for a message or its own buffers.
    public var isOutOfMemory: Bool { code == ENOMEM }

    /// `ETERM`: the socket's context was shut down (``ZMQContext/shutdown()``).
    public static let terminated = Int32(ETERM)
    /// `EAGAIN`: the operation would block.
    public static let wouldBlock = Int32(EAGAIN)
    /// `EHOSTUNREACH`: a ROUTER with ``SocketOption/routerMandatory(_:)`` has no peer with that routing id.
    public static let hostUnreachable = Int32(EHOSTUNREACH)
    /// `EFSM`: the operation is not allowed in the socket's state (REQ sending twice).
    public static let invalidState = Int32(EFSM)
    /// `EINVAL`: an invalid argument (an endpoint, an option value, a key).
    public static let invalidArgument = Int32(EINVAL)
    /// `ENOTSOCK`: the socket was closed.
    public static let notSocket = Int32(ENOTSOCK)
    /// `ENOENT`: unbind or disconnect of an endpoint that is not bound or connected.
    public static let noEntry = Int32(ENOENT)
    /// `EADDRINUSE`: the address is already bound.
    public static let addressInUse = Int32(EADDRINUSE)
    /// `EMSGSIZE`: a received message has more frames than the receiving call allows.
    public static let messageTooLarge = Int32(EMSGSIZE)
    /// `ENOTSUP`: the library was built without the capability (CURVE without libsodium).
    public static let notSupported = Int32(ENOTSUP)
}
