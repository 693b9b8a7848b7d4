import CZeroMQ

/// The events a poller waits for on a socket.
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// At least one message can be received without waiting (ZMQ_POLLIN).
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// At least one message can be sent without waiting (ZMQ_POLLOUT).
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}

/// Waits on several sockets at once (`zmq_poll`): the core of a single-threaded poll loop
/// that owns every socket, as the Majordomo broker does.
///
/// ```swift
/// var poller = ZMQPoller()
/// poller.add(frontend)
/// poller.add(backend)
/// while running {
///     let ready = try poller.poll(timeout: .milliseconds(2500))
///     if ready.contains(frontend), let message = try frontend.tryReceive() { ... }
///     if ready.contains(backend), let message = try backend.tryReceive() { ... }
///     // heartbeats and timers here, on every turn, whether or not a socket was ready
/// }
/// ```
///
/// A poller holds its sockets (and so keeps them alive); like them it belongs to one thread.
/// It can also wait on plain file descriptors (a pipe other threads write to, say), which
/// `zmq_poll` watches alongside the sockets.
public struct ZMQPoller {
    private var sockets: [ZMQSocket] = []
    private var events: [PollEvents] = []
    private var descriptors: [Int32] = []

    public init() {}

    /// Adds `socket` to the set, waiting for `events`. A socket added twice is polled twice.
    public mutating func add(_ socket: ZMQSocket, events: PollEvents = .readable) {
        sockets.append(socket)
        self.events.append(events)
    }

    /// Adds the file descriptor `descriptor` to the set, waiting until it can be read. The
    /// caller keeps it open while the poller may poll it.
    public mutating func add(readableDescriptor descriptor: Int32) {
        descriptors.append(descriptor)
    }

    /// Removes `socket` from the set.
    public mutating func remove(_ socket: ZMQSocket) {
        while let index = sockets.firstIndex(where: { $0 === socket }) {
            sockets.remove(at: index)
            events.remove(at: index)
        }
    }

    /// Waits until at least one socket has one of its events or a descriptor can be read, or
    /// `timeout` passes (nil waits without limit; `.zero` only checks). Signals interrupting
    /// the wait are retried with the remaining time. Fails with ``ZMQError/terminated`` once
    /// the context is shut down, and with ``ZMQError/notSocket`` if a socket in the set was closed.
    public func poll(timeout: Duration?) throws(ZMQError) -> PollResult {
        var items = [zmq_pollitem_t]()
        items.reserveCapacity(sockets.count + descriptors.count)
        for (socket, wanted) in zip(sockets, events) {
            let handle = try socket.openHandle("zmq_poll")
            items.append(zmq_pollitem_t(socket: handle, fd: 0, events: wanted.rawValue, revents: 0))
        }
        for descriptor in descriptors {
            items.append(zmq_pollitem_t(socket: nil, fd: descriptor, events: Int16(ZMQ_POLLIN), revents: 0))
        }
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            let milliseconds = deadline.map { Milliseconds.rounding(clock.now.duration(to: $0)) } ?? -1
            let count = zmq_poll(&items, Int32(items.count), milliseconds)
            if count >= 0 { break }
            let error = ZMQError.last("zmq_poll")
            guard error.code == EINTR else { throw error }
        }
        let socketItems = items.prefix(sockets.count)
        let descriptorItems = items.dropFirst(sockets.count)
        return PollResult(
            ready: zip(sockets, socketItems).compactMap { socket, item in
                item.revents == 0 ? nil : (socket, PollEvents(rawValue: item.revents))
            },
            readableDescriptors: Set(zip(descriptors, descriptorItems).compactMap { $1.revents == 0 ? nil : $0 }))
    }
}

/// Which sockets a ``ZMQPoller/poll(timeout:)`` found ready, and for what.
public struct PollResult {
    private let ready: [(socket: ZMQSocket, events: PollEvents)]
    private let readableDescriptors: Set<Int32>

    init(ready: [(socket: ZMQSocket, events: PollEvents)], readableDescriptors: Set<Int32> = []) {
        self.ready = ready
        self.readableDescriptors = readableDescriptors
    }

    /// True when nothing was ready (the timeout passed).
    public var isEmpty: Bool { ready.isEmpty && readableDescriptors.isEmpty }

    /// The events `socket` is ready for (empty when none).
    public func events(of socket: ZMQSocket) -> PollEvents {
        ready.filter { $0.socket === socket }.reduce(into: PollEvents()) { $0.formUnion($1.events) }
    }

    /// True when `socket` is ready for `events` (by default, to receive).
    public func contains(_ socket: ZMQSocket, _ events: PollEvents = .readable) -> Bool {
        self.events(of: socket).isSuperset(of: events)
    }

    /// True when the file descriptor `descriptor` (added with
    /// ``ZMQPoller/add(readableDescriptor:)``) can be read (or is at its end, or failed).
    public func contains(readableDescriptor descriptor: Int32) -> Bool {
        readableDescriptors.contains(descriptor)
    }
}

/// A poller holds sockets, so it stays on their thread.
@available(*, unavailable)
extension ZMQPoller: Sendable {}

@available(*, unavailable)
extension PollResult: Sendable {}
