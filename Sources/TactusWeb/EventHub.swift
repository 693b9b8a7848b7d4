import Foundation
import Logging
import TactusClient
import TactusModel
import TactusProtocol

/// The coordinator's events, read on a thread of their own and handed to every listener: the
/// Server-Sent Events streams of the pages and of `/api/v1/events`, and the metrics.
///
/// Events are notifications, not a reliable channel (SPEC section 5): a stream that falls more
/// than ``bufferedEvents`` behind loses the oldest ones, and pages ask `status` as well. An
/// event's body is at most ``maxStreamedEventBytes``.
public final class EventHub: @unchecked Sendable {
    /// One event as the gateway forwards it: its name and its JSON body, as the coordinator sent them.
    public struct Message: Sendable, Hashable {
        public var event: Event
        public var name: String
        public var json: String
        /// The song the event is about, nil for worker and scan events.
        public var song: SongID?
    }

    /// How many events a slow stream may fall behind before the oldest are dropped.
    public static let bufferedEvents = 1024
    /// How many streams may be open at once: each holds up to ``bufferedEvents`` for a
    /// subscriber that does not read.
    public static let maxStreams = 256

    private let endpoint: String
    private let connections: CoordinatorConnections
    private let logger: Logger
    private let lock = NSLock()
    private var listeners: [UUID: AsyncStream<Message>.Continuation] = [:]
    private var observers: [@Sendable (Message) -> Void] = []
    private var thread: Thread?
    private var stopped = false

    public init(endpoint: String, connections: CoordinatorConnections, logger: Logger) {
        self.endpoint = endpoint
        self.connections = connections
        self.logger = logger
    }

    /// Calls `observer` with every event, on the reading thread (keep it short).
    public func observe(_ observer: @escaping @Sendable (Message) -> Void) {
        lock.withLock { observers.append(observer) }
    }

    /// A stream of the events from now on; it ends when the consumer stops iterating, or when
    /// the hub stops. Nil when ``maxStreams`` are open, or the hub has stopped.
    public func stream() -> AsyncStream<Message>? {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingNewest(Self.bufferedEvents))
        let added = lock.withLock {
            guard !stopped, listeners.count < Self.maxStreams else { return false }
            listeners[id] = continuation
            return true
        }
        guard added else { return nil }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = lock.withLock { listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many streams are open.
    public var listenerCount: Int { lock.withLock { listeners.count } }

    /// Starts reading events (subscribed to everything) on a thread of its own.
    public func start() throws(ClientError) {
        let subscriber = SubscriberBox(
            try EventSubscriber(endpoint: endpoint, topics: [""], context: connections.context, curve: connections.curve))
        let thread = Thread { [self] in read(subscriber.subscriber) }
        thread.name = "tactus-web-events"
        self.thread = thread
        thread.start()
    }

    /// Stops reading and ends every stream.
    public func stop() {
        let open = lock.withLock {
            stopped = true
            return Array(listeners.values)
        }
        for continuation in open { continuation.finish() }
    }

    private func read(_ subscriber: EventSubscriber) {
        while !lock.withLock({ stopped }) {
            let event: Event?
            do {
                event = try subscriber.next(timeout: .milliseconds(250))
            } catch {
                logger.warning("events from \(endpoint): \(error)")
                Thread.sleep(forTimeInterval: 1)
                continue
            }
            guard let event, let message = Self.message(event) else { continue }
            let (open, observing) = lock.withLock { (Array(listeners.values), observers) }
            for observer in observing { observer(message) }
            for continuation in open { continuation.yield(message) }
        }
    }

    /// The largest event body streamed: a `scan.progress` event listing long skipped paths is
    /// listed shorter to fit, and anything larger is left out of the streams (each stream may
    /// hold a few events for a client that does not read, copied for it).
    static let maxStreamedEventBytes = 64 << 10

    static func message(_ event: Event) -> Message? {
        guard var frames = try? event.frames(), frames.count == 4 else { return nil }
        if frames[3].count > maxStreamedEventBytes, case .scanProgress(let summary) = event {
            let shorter = Event.scanProgress(summary.listingSkips(atMost: 100, bytes: maxStreamedEventBytes / 4))
            guard let listed = try? shorter.frames(), listed.count == 4 else { return nil }
            frames = listed
        }
        guard frames[3].count <= maxStreamedEventBytes else { return nil }
        let song: SongID?
        switch event {
        case .jobDone(let body): song = body.song
        case .jobFailed(let body): song = body.song
        case .songDone(let body): song = body.song
        case .workerJoined, .workerLost, .scanProgress: song = nil
        }
        return Message(event: event, name: event.name.rawValue, json: String(decoding: frames[3], as: UTF8.self), song: song)
    }
}

/// The subscriber handed to the reading thread, which alone uses it from then on.
private final class SubscriberBox: @unchecked Sendable {
    let subscriber: EventSubscriber
    init(_ subscriber: EventSubscriber) { self.subscriber = subscriber }
}
