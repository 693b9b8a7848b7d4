import TactusModel
import TactusProtocol
import TactusZMQ

/// Follows the coordinator's events (`job.done`, `job.failed`, `song.done`, `worker.joined`,
/// `worker.lost`) on its PUB socket, by topic: a song id for that song's events,
/// `worker:` for worker events, the empty topic for everything.
///
/// Events are notifications, not a reliable channel: subscribe before submitting, and ask
/// `status` now and then for what may have been missed (SPEC section 5).
///
/// ```swift
/// let events = try EventSubscriber(endpoint: "tcp://127.0.0.1:5557", context: client.context)
/// try events.subscribe(songID)
/// let submitted = try client.submit(request, audio: bytes)
/// while let event = try events.next(timeout: .seconds(1)) { ... }
/// ```
public final class EventSubscriber {
    public let endpoint: String
    public let limits: ProtocolLimits
    /// Events received that could not be decoded (another protocol version, a damaged body),
    /// and so were skipped.
    public private(set) var skipped = 0
    private let socket: ZMQSocket

    /// Connects a SUB socket to `endpoint`, subscribed to `topics` (none at first by default),
    /// over CURVE with `curve` (a client's ``TactusClient/curve``) when given.
    public init(
        endpoint: String, topics: [String] = [], limits: ProtocolLimits = .standard, context: ZMQContext,
        curve: CurveClientKeys? = nil
    ) throws(ClientError) {
        self.endpoint = endpoint
        self.limits = limits
        do throws(ZMQError) {
            socket = try context.socket(.sub)
            try socket.set([.linger(.zero), .maxMessageSize(limits.maxBodyBytes)])
            if let curve { try socket.set(curve.socketOptions) }
            for topic in topics { try socket.set(.subscribe(Array(topic.utf8))) }
            try socket.connect(endpoint)
        } catch {
            throw .transport(error)
        }
    }

    /// Receives the events whose topic starts with `topic` from now on.
    public func subscribe(_ topic: String) throws(ClientError) {
        do throws(ZMQError) {
            try socket.set(.subscribe(Array(topic.utf8)))
        } catch {
            throw .transport(error)
        }
    }

    /// Stops receiving the events of `topic` (a subscription made with ``subscribe(_:)``).
    public func unsubscribe(_ topic: String) throws(ClientError) {
        do throws(ZMQError) {
            try socket.set(.unsubscribe(Array(topic.utf8)))
        } catch {
            throw .transport(error)
        }
    }

    /// Receives the events of `song` (their topic is its id) from now on.
    public func subscribe(_ song: SongID) throws(ClientError) {
        try subscribe(song.hex)
    }

    /// Stops receiving the events of `song`.
    public func unsubscribe(_ song: SongID) throws(ClientError) {
        try unsubscribe(song.hex)
    }

    /// The next event, waiting at most `timeout` (`.zero` only looks); nil when none came.
    public func next(timeout: Duration) throws(ClientError) -> Event? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let frames: [[UInt8]]
            do throws(ZMQError) {
                guard let received = try socket.receive(timeout: max(deadline - clock.now, .zero), maxFrames: limits.maxFrames)
                else { return nil }
                frames = received
            } catch where error.code == ZMQError.messageTooLarge {
                skipped += 1
                continue
            } catch {
                throw .transport(error)
            }
            if let event = try? Event(frames: frames, limits: limits) { return event }
            skipped += 1
        }
    }
}

/// The coordinator's default endpoints, and the events endpoint that goes with a frontend.
public enum CoordinatorEndpoints {
    /// Where clients send requests by default.
    public static let frontend = "tcp://127.0.0.1:5555"
    /// Where workers connect by default.
    public static let backend = "tcp://127.0.0.1:5556"
    /// Where events are published by default.
    public static let events = "tcp://127.0.0.1:5557"

    /// The events endpoint of the coordinator whose frontend is `server`: the same host, the
    /// port plus 2 (as with the defaults); nil when `server` is not `tcp://HOST:PORT`.
    public static func events(forFrontend server: String) -> String? {
        let prefix = "tcp://"
        guard server.hasPrefix(prefix), let colon = server.lastIndex(of: ":"),
            let port = Int(server[server.index(after: colon)...]), (1...65533).contains(port)
        else { return nil }
        let host = server[server.index(server.startIndex, offsetBy: prefix.count)..<colon]
        guard !host.isEmpty else { return nil }
        return "\(prefix)\(host):\(port + 2)"
    }
}
