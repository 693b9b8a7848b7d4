import CZeroMQ

/// The ZeroMQ socket patterns Tactus uses.
public enum SocketType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Exclusive pair, for signalling between two threads over `inproc://`.
    case pair
    /// Publisher: sends to every subscriber whose subscription prefixes the first frame.
    case pub
    /// Subscriber: receives what it subscribed to with ``SocketOption/subscribe(_:)``.
    case sub
    /// Strict request-reply client (adds and strips the empty delimiter frame itself).
    case req
    /// Strict request-reply server.
    case rep
    /// Asynchronous client or worker: load-balances outgoing messages, fair-queues incoming.
    case dealer
    /// Asynchronous server: prefixes each received message with the peer's routing id frame,
    /// and sends each message to the peer named by its first frame.
    case router

    var rawValue: Int32 {
        switch self {
        case .pair: ZMQ_PAIR
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        }
    }

    public var description: String {
        switch self {
        case .pair: "PAIR"
        case .pub: "PUB"
        case .sub: "SUB"
        case .req: "REQ"
        case .rep: "REP"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        }
    }
}

/// A ZeroMQ socket that sends and receives multipart messages of byte frames.
///
/// **Frames are `[UInt8]`** and a message is `[[UInt8]]`, first frame first: a value type
/// with no Foundation dependency, copied once between libzmq's buffers and Swift's.
///
/// **One thread at a time.** libzmq sockets are not thread-safe, so `ZMQSocket` is not
/// `Sendable`: the compiler keeps a socket in the isolation region that created it. A
/// freshly created socket may be handed to another thread (`sending`), which is the one
/// migration libzmq allows (the hand-over is a full memory barrier). To serve several
/// sockets from one thread, poll them with ``ZMQPoller``.
///
/// The socket closes when it is deinitialised or on ``close()``; closing is subject to its
/// linger (``SocketOption/linger(_:)``, by default the context's `socketLinger`).
///
/// ```swift
/// let context = try ZMQContext()
/// let server = try context.socket(.router)
/// try server.bind("tcp://127.0.0.1:*")
/// let endpoint = try server.lastEndpoint   // "tcp://127.0.0.1:41234"
/// if let message = try server.receive(timeout: .seconds(1)) {
///     try server.send([message[0], Array("hello".utf8)])
/// }
/// ```
public final class ZMQSocket {
    public let type: SocketType
    /// Kept alive for as long as the socket is open (libzmq terminates a context only after
    /// its sockets are closed).
    private let context: ZMQContext
    private var handle: UnsafeMutableRawPointer?
    /// One `zmq_msg_t` reused for every received frame. It lives on the heap because libzmq
    /// stores small frames inside the `zmq_msg_t` itself, so it must not move.
    private let scratch: UnsafeMutablePointer<zmq_msg_t>

    init(context: ZMQContext, type: SocketType) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError.last("zmq_socket \(type)")
        }
        var linger = context.defaultLingerMilliseconds
        if zmq_setsockopt(handle, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size) != 0 {
            let error = ZMQError.last("zmq_setsockopt ZMQ_LINGER")
            zmq_close(handle)
            throw error
        }
        self.type = type
        self.context = context
        self.handle = handle
        self.scratch = .allocate(capacity: 1)
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// Closes the socket now (it is closed at deinit otherwise). Later calls fail with
    /// ``ZMQError/notSocket``. Closing twice does nothing.
    public func close() {
        guard let handle else { return }
        zmq_close(handle)
        self.handle = nil
    }

    public var isClosed: Bool { handle == nil }

    /// The open handle, for the poller and the option setters.
    func openHandle(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(code: ZMQError.notSocket, operation: operation()) }
        return handle
    }

    // MARK: Endpoints

    /// Accepts connections on `endpoint` (`tcp://127.0.0.1:5555`, `tcp://127.0.0.1:*` for an
    /// ephemeral port, `tcp://[::1]:*`, `inproc://name`). ``lastEndpoint`` then tells the
    /// address bound. Here and in ``connect(_:)``, an IPv6 address in brackets makes the socket
    /// take IPv6 (``SocketOption/ipv6(_:)``); no other endpoint does, so that a host name such as
    /// `localhost` is reached at the address it always was.
    public func bind(_ endpoint: String) throws(ZMQError) {
        if endpoint.contains("[") { try set(.ipv6(true)) }
        let handle = try openHandle("bind \(endpoint)")
        try retryingInterrupts("bind \(endpoint)") { zmq_bind(handle, endpoint) }
    }

    /// Connects to `endpoint`. Connections are asynchronous: the call returns before the peer
    /// is reached, and libzmq reconnects on its own (``SocketOption/reconnectInterval(_:)``).
    public func connect(_ endpoint: String) throws(ZMQError) {
        if endpoint.contains("[") { try set(.ipv6(true)) }
        let handle = try openHandle("connect \(endpoint)")
        try retryingInterrupts("connect \(endpoint)") { zmq_connect(handle, endpoint) }
    }

    /// Stops accepting on `endpoint`, which must be the exact text ``lastEndpoint`` reported
    /// for a wildcard bind.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("unbind \(endpoint)")
        try retryingInterrupts("unbind \(endpoint)") { zmq_unbind(handle, endpoint) }
    }

    /// Drops the connection to `endpoint` made with ``connect(_:)``.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        let handle = try openHandle("disconnect \(endpoint)")
        try retryingInterrupts("disconnect \(endpoint)") { zmq_disconnect(handle, endpoint) }
    }

    /// The endpoint of the last ``bind(_:)`` or ``connect(_:)``, with a wildcard port
    /// resolved (`tcp://127.0.0.1:41234`); empty before either.
    public var lastEndpoint: String {
        get throws(ZMQError) {
            let handle = try openHandle("ZMQ_LAST_ENDPOINT")
            var buffer = [CChar](repeating: 0, count: 1024)
            var size = buffer.count
            if zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) != 0 {
                throw ZMQError.last("zmq_getsockopt ZMQ_LAST_ENDPOINT")
            }
            return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
    }

    // MARK: Sending

    /// Sends `frames` as one multipart message, waiting while the peer's queue is full
    /// (high-water mark). ZeroMQ delivers all the frames or none.
    ///
    /// Fails with ``ZMQError/hostUnreachable`` on a ROUTER with ``SocketOption/routerMandatory(_:)``
    /// when no peer has the routing id in the first frame, and with ``ZMQError/terminated``
    /// once the context is shut down.
    public func send(_ frames: [[UInt8]]) throws(ZMQError) {
        _ = try send(frames, flags: 0)
    }

    /// Sends `frames` as one multipart message if that can be done without waiting; returns
    /// false (and sends nothing) when the message cannot be queued now.
    public func trySend(_ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        try send(frames, flags: ZMQ_DONTWAIT)
    }

    private func send(_ frames: [[UInt8]], flags: Int32) throws(ZMQError) -> Bool {
        let handle = try openHandle("send")
        guard !frames.isEmpty else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "send: a message has at least one frame")
        }
        for (index, frame) in frames.enumerated() {
            let more = index < frames.count - 1 ? ZMQ_SNDMORE : 0
            // Only the first frame may fail to queue: once it is accepted, libzmq accepts the rest.
            let frameFlags = more | (index == 0 ? flags : 0)
            while true {
                let result = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, frameFlags) }
                if result >= 0 { break }
                let error = ZMQError.last("send frame \(index) of \(frames.count)")
                if error.code == EINTR { continue }
                if error.code == EAGAIN && index == 0 && flags & ZMQ_DONTWAIT != 0 { return false }
                throw error
            }
        }
        return true
    }

    // MARK: Receiving

    /// Waits for the next message and returns its frames.
    ///
    /// - Parameter maxFrames: a message with more frames is read to its end and discarded,
    ///   and the call fails with ``ZMQError/messageTooLarge``. The size of each frame is
    ///   bounded by ``SocketOption/maxMessageSize(_:)``.
    public func receive(maxFrames: Int = .max) throws(ZMQError) -> [[UInt8]] {
        // A blocking receive only returns without a message on error.
        try receive(flags: 0, maxFrames: maxFrames)!
    }

    /// The next message if one is waiting, without waiting; nil otherwise.
    public func tryReceive(maxFrames: Int = .max) throws(ZMQError) -> [[UInt8]]? {
        try receive(flags: ZMQ_DONTWAIT, maxFrames: maxFrames)
    }

    /// The next message, waiting at most `timeout`; nil when none came in time.
    public func receive(timeout: Duration, maxFrames: Int = .max) throws(ZMQError) -> [[UInt8]]? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let message = try tryReceive(maxFrames: maxFrames) { return message }
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            var poller = ZMQPoller()
            poller.add(self, events: .readable)
            _ = try poller.poll(timeout: remaining)
        }
    }

    /// The next message if one is waiting, without waiting, cut to its first `maxFrames`
    /// frames, with the number of frames it had and its sender's `User-Id`. A server uses it
    /// to answer a message with too many frames, whose first frame (a ROUTER's routing id)
    /// says who sent it.
    public func tryReceive(keepingAtMost maxFrames: Int) throws(ZMQError) -> ReceivedMessage? {
        try receiveMessage(flags: ZMQ_DONTWAIT, keeping: maxFrames)
    }

    /// As ``tryReceive(keepingAtMost:)``, copying the frames after the first only while they
    /// add up to at most `bytesAfter(firstFrame)` bytes: the frames of a larger message are
    /// let go without being copied, and the message comes with its first frame alone and
    /// ``ReceivedMessage/bytesLeftOut`` saying how many bytes were not copied. A server so
    /// drops, at the cost of freeing it, a large message its sender may not send.
    public func tryReceive(
        keepingAtMost maxFrames: Int, bytesAfter limit: ([UInt8]) -> Int
    ) throws(ZMQError) -> ReceivedMessage? {
        try receiveMessage(flags: ZMQ_DONTWAIT, keeping: maxFrames, bytesAfterFirst: limit)
    }

    private func receive(flags: Int32, maxFrames: Int) throws(ZMQError) -> [[UInt8]]? {
        guard let message = try receiveMessage(flags: flags, keeping: maxFrames) else { return nil }
        try Self.check(message, maxFrames: maxFrames)
        return message.frames
    }

    private static func check(_ message: ReceivedMessage, maxFrames: Int) throws(ZMQError) {
        guard message.frameCount <= maxFrames else {
            throw ZMQError(
                code: ZMQError.messageTooLarge,
                operation: "receive: a message of \(message.frameCount) frames exceeds the limit of \(maxFrames)")
        }
    }

    /// Reads a whole message, keeping its first `keeping` frames, and of the frames after the
    /// first only as many bytes as `bytesAfterFirst` of the first frame allows.
    private func receiveMessage(
        flags: Int32, keeping: Int, bytesAfterFirst: ([UInt8]) -> Int = { _ in .max }
    ) throws(ZMQError) -> ReceivedMessage? {
        let handle = try openHandle("receive")
        var message = ReceivedMessage(frames: [], frameCount: 0, userID: nil)
        var allowed = Int.max, kept = 0
        while true {
            zmq_msg_init(scratch)
            defer { zmq_msg_close(scratch) }
            // Later frames of a message are already queued: only the first may need waiting.
            let frameFlags = message.frameCount == 0 ? flags : 0
            if zmq_msg_recv(scratch, handle, frameFlags) < 0 {
                let error = ZMQError.last("receive")
                if error.code == EINTR { continue }
                if error.code == EAGAIN && message.frameCount == 0 && flags & ZMQ_DONTWAIT != 0 { return nil }
                throw error
            }
            message.frameCount += 1
            // A ROUTER's routing-id frame is made locally and carries no metadata: the peer's
            // User-Id is on the frames it sent, so every frame is asked until one has it.
            if message.peerAddress == nil, let value = zmq_msg_gets(scratch, "Peer-Address") {
                let text = String(cString: value)
                message.peerAddress = text.isEmpty ? nil : text
            }
            if message.userID == nil, let value = zmq_msg_gets(scratch, "User-Id") {
                let text = String(cString: value)
                message.userID = text.isEmpty ? nil : text
            }
            let size = zmq_msg_size(scratch)
            if message.frameCount > 1 && message.bytesLeftOut == 0 && size > allowed - kept {
                // Over what the sender may send: the frames copied after the first go too.
                message.bytesLeftOut = kept
                message.frames.removeSubrange(1...)
            }
            if message.bytesLeftOut > 0 {
                message.bytesLeftOut += size
            } else if message.frameCount <= keeping {
                if let data = zmq_msg_data(scratch), size > 0 {
                    message.frames.append(Array(UnsafeRawBufferPointer(start: data, count: size)))
                } else {
                    message.frames.append([])
                }
                if message.frameCount == 1 {
                    allowed = bytesAfterFirst(message.frames[0])
                } else {
                    kept += size
                }
            }
            if zmq_msg_more(scratch) == 0 { break }
        }
        return message
    }

    // MARK: Options

    /// Sets a socket option. Options that affect connections (``SocketOption/curveServer(_:)``,
    /// ``SocketOption/routingID(_:)``, ``SocketOption/maxMessageSize(_:)``, heartbeats) must be
    /// set before ``bind(_:)`` or ``connect(_:)``.
    public func set(_ option: SocketOption) throws(ZMQError) {
        let handle = try openHandle("set \(option.name)")
        try option.apply(to: handle)
    }

    /// Sets several options in order.
    public func set(_ options: [SocketOption]) throws(ZMQError) {
        for option in options { try set(option) }
    }

    /// The socket's routing id (ZMQ_ROUTING_ID), empty when none was set.
    public var routingID: [UInt8] {
        get throws(ZMQError) {
            let handle = try openHandle("ZMQ_ROUTING_ID")
            var buffer = [UInt8](repeating: 0, count: 255)
            var size = buffer.count
            if zmq_getsockopt(handle, ZMQ_ROUTING_ID, &buffer, &size) != 0 {
                throw ZMQError.last("zmq_getsockopt ZMQ_ROUTING_ID")
            }
            return Array(buffer.prefix(size))
        }
    }

    /// The largest frame content accepted from a peer, as set with
    /// ``SocketOption/maxMessageSize(_:)`` (ZMQ_MAXMSGSIZE less the CURVE overhead), nil when unlimited.
    public var maxMessageSize: Int? {
        get throws(ZMQError) {
            let handle = try openHandle("ZMQ_MAXMSGSIZE")
            var value: Int64 = 0
            var size = MemoryLayout<Int64>.size
            if zmq_getsockopt(handle, ZMQ_MAXMSGSIZE, &value, &size) != 0 {
                throw ZMQError.last("zmq_getsockopt ZMQ_MAXMSGSIZE")
            }
            return value < 0 ? nil : Int(value) - SocketOption.curveFrameOverhead
        }
    }

    private func retryingInterrupts(_ operation: @autoclosure () -> String, _ call: () -> Int32) throws(ZMQError) {
        while call() != 0 {
            let error = ZMQError.last(operation())
            if error.code != EINTR { throw error }
        }
    }
}

/// A socket must stay on one thread at a time: no `Sendable` conformance, not even an unchecked one.
@available(*, unavailable)
extension ZMQSocket: Sendable {}

/// A message as ``ZMQSocket/tryReceive(keepingAtMost:)`` read it.
public struct ReceivedMessage: Sendable, Hashable {
    /// The first frames (all of them unless the message had more than were kept).
    public var frames: [[UInt8]]
    /// How many frames the message had.
    public var frameCount: Int
    /// The `User-Id` the ZAP handler gave the sender; nil without authentication.
    public var userID: String?
    /// The sender's IP address (`Peer-Address`); nil for a peer that has none (`ipc://`,
    /// `inproc://`).
    public var peerAddress: String? = nil
    /// The bytes of the frames after the first that were not copied, the message being over
    /// the limit the receiver gave (``ZMQSocket/tryReceive(keepingAtMost:bytesAfter:)``); 0
    /// when it was not.
    public var bytesLeftOut = 0
}
