import CZeroMQ

/// A libzmq context: the I/O threads and the `inproc://` namespace shared by its sockets.
///
/// A context is thread-safe and `Sendable`: create one per process and share it. Every
/// ``ZMQSocket`` keeps its context alive, so the context is terminated (`zmq_ctx_term`) only
/// after its last socket is closed, and that termination does not wait on an open socket.
///
/// Shutting down a process whose sockets are owned by other threads:
/// 1. call ``shutdown()`` from any thread: every blocking call on the context's sockets (and
///    every later call) fails with ``ZMQError/terminated``;
/// 2. each owning thread sees that error, closes its socket and returns;
/// 3. the last reference to the context goes away and `zmq_ctx_term` returns once unsent
///    messages are delivered or the sockets' ``SocketOption/linger(_:)`` expires.
public final class ZMQContext: @unchecked Sendable {
    // @unchecked: a libzmq context is thread-safe (zmq_ctx_* and zmq_socket may be called
    // from any thread), and the handle never changes after init.
    let handle: UnsafeMutableRawPointer
    /// The linger given to every new socket, in milliseconds (-1 is forever).
    let defaultLingerMilliseconds: Int32

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - ioThreads: libzmq's background I/O threads; one handles about a gigabyte per second.
    ///   - socketLinger: how long a closed socket may keep trying to deliver unsent messages
    ///     (nil: forever, libzmq's default, which can hang shutdown on a dead peer). Each
    ///     socket may change it with ``SocketOption/linger(_:)``.
    public init(ioThreads: Int = 1, socketLinger: Duration? = .seconds(1)) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(clamping: ioThreads)) != 0 {
            let error = ZMQError.last("zmq_ctx_set ZMQ_IO_THREADS \(ioThreads)")
            zmq_ctx_term(handle)
            throw error
        }
        self.handle = handle
        self.defaultLingerMilliseconds = socketLinger.map { Int32(clamping: Milliseconds.rounding($0)) } ?? -1
    }

    /// Creates a socket of `type` in this context. The socket belongs to the calling thread
    /// (see ``ZMQSocket``).
    public func socket(_ type: SocketType) throws(ZMQError) -> ZMQSocket {
        try ZMQSocket(context: self, type: type)
    }

    /// Makes every blocking call on this context's sockets return ``ZMQError/terminated``,
    /// now and from then on. Thread-safe; call it from a signal handler's thread or a
    /// supervisor to stop poll loops. The sockets must still be closed by their owners.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Every socket holds a reference to its context, so none is open here: termination
        // waits only for lingering messages. EINTR means a signal interrupted the wait.
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}

/// The libzmq library linked in.
public enum ZMQLibrary {
    /// The version as (major, minor, patch).
    public static var version: (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }

    /// Whether the library supports `capability` (`"curve"`, `"ipc"`, ...), as `zmq_has`.
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }
}

/// Conversions between `Duration` and libzmq's millisecond integers.
enum Milliseconds {
    /// `duration` in whole milliseconds, rounded up so that a short positive wait never
    /// becomes a zero wait (a busy loop); negative durations are zero.
    static func rounding(_ duration: Duration) -> Int {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let (whole, remainder) = attoseconds.quotientAndRemainder(dividingBy: perMillisecond)
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int.max }
        let milliseconds = total.partialValue + whole + (remainder > 0 ? 1 : 0)
        return milliseconds < 0 ? 0 : Int(clamping: milliseconds)
    }
}
