import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization
import TactusModel
import TactusZMQ

/// How many HTTP connections the gateway holds at once, in all and from one address (an IPv4
/// address or an IPv6 /64 network, ``PeerAddress/group(of:)``; each loopback address is one).
/// A connection past either limit is closed as soon as it opens, before a byte of its request
/// is read.
///
/// A connection that sends a request's headers slowly is held until they end (or until
/// ``WebGateway/idleTimeout``), with up to ``WebGateway/maxHeaderBytes`` of them buffered: 20,000
/// such connections from one address once took the gateway past 2 GB (attack round 6), which it
/// then kept. With the limits the buffered headers stay within `maxConnections` times that;
/// and once many connections have closed, the heap is handed back to the system
/// (``SystemHeap/trim()``).
///
/// When every place is taken, a newcomer (within its address's share) takes the place of the
/// connection that has waited longest, at least ``evictableAfter``, with no request in
/// progress: still sending its first request head, or idle between requests (keep-alive).
/// 2,048 connections from four addresses sending their heads a byte every 5 s locked every
/// other client out (attack round 7), where a browser's request head arrives in one piece; a
/// request in progress (an answer being computed or sent, an upload, an events stream) is
/// never cut.
final class HTTPConnectionPlaces: Sendable {
    let maxConnections: Int
    let maxPerAddress: Int
    private let held = Mutex<Held>(Held())

    private struct Held {
        var total = 0
        var byAddress: [String: Int] = [:]
        /// The most connections held since the heap was last trimmed.
        var peak = 0
        /// The connections with no request in progress, by connection, since when.
        var waiting: [ObjectIdentifier: Waiting] = [:]
        /// Connections closed to make room, whose places were given back then.
        var evicted: Set<ObjectIdentifier> = []
    }

    /// A connection with no request in progress.
    private struct Waiting {
        let channel: any Channel
        let address: String
        let since: ContinuousClock.Instant
    }

    /// How long a connection may be without a request in progress before a newcomer may take
    /// its place.
    static let evictableAfter = Duration.seconds(2)

    /// After a peak of at least this many connections, the heap is trimmed once half of them
    /// have closed.
    static let trimAfterPeak = 64

    init(maxConnections: Int, maxPerAddress: Int) {
        self.maxConnections = max(maxConnections, 1)
        self.maxPerAddress = max(1, min(maxPerAddress, maxConnections))
    }

    /// Takes a place for a connection from `address`, or says why there is none. `connection`
    /// (with its `channel`) is the connection, which has no request in progress until
    /// ``requestBegan(_:)``; when every place is taken, the connection that has been without a
    /// request longest (at least ``evictableAfter``) is closed and gives its place.
    func admit(_ address: String, connection: ObjectIdentifier? = nil, channel: (any Channel)? = nil, now: ContinuousClock.Instant = .now) -> String? {
        let (refusal, evicted) = held.withLock { held -> (String?, (any Channel)?) in
            if held.byAddress[address, default: 0] >= maxPerAddress {
                return ("\(address) holds \(maxPerAddress) connections, the most one address may", nil)
            }
            var evicted: (any Channel)?
            if held.total >= maxConnections {
                guard let (oldest, waiting) = held.waiting.min(by: { $0.value.since < $1.value.since }),
                    now - waiting.since >= Self.evictableAfter
                else { return ("the gateway holds \(maxConnections) connections, the most it takes", nil) }
                held.waiting[oldest] = nil
                held.evicted.insert(oldest)
                Self.giveBack(waiting.address, in: &held)
                evicted = waiting.channel
            }
            held.total += 1
            held.byAddress[address, default: 0] += 1
            held.peak = max(held.peak, held.total)
            if let connection, let channel { held.waiting[connection] = Waiting(channel: channel, address: address, since: now) }
            return (nil, evicted)
        }
        evicted?.close(promise: nil)
        return refusal
    }

    /// A request's head has arrived on the connection: it keeps its place until the answer ends.
    func requestBegan(_ connection: ObjectIdentifier) {
        held.withLock { _ = $0.waiting.removeValue(forKey: connection) }
    }

    /// The answer to the connection's request has ended (written whole): it waits for another.
    func requestEnded(_ connection: ObjectIdentifier, channel: any Channel, address: String, now: ContinuousClock.Instant = .now) {
        held.withLock { held in
            guard !held.evicted.contains(connection) else { return }
            held.waiting[connection] = Waiting(channel: channel, address: address, since: now)
        }
    }

    /// Gives back the place of a connection from `address` (unless it was given when the
    /// connection was closed to make room); true when the heap should now be trimmed (half of
    /// a large peak has closed since the last trim).
    func release(_ address: String, connection: ObjectIdentifier? = nil) -> Bool {
        held.withLock { held in
            if let connection {
                held.waiting[connection] = nil
                if held.evicted.remove(connection) != nil { return false }
            }
            Self.giveBack(address, in: &held)
            guard held.peak >= Self.trimAfterPeak, held.total <= held.peak / 2 else { return false }
            held.peak = held.total
            return true
        }
    }

    private static func giveBack(_ address: String, in held: inout Held) {
        held.total -= 1
        let left = held.byAddress[address, default: 1] - 1
        held.byAddress[address] = left > 0 ? left : nil
    }

    /// The connections held now, in all and from `address`.
    func count(from address: String? = nil) -> Int {
        held.withLock { held in address.map { held.byAddress[$0, default: 0] } ?? held.total }
    }

    /// A handler for one connection's pipeline, which takes its place and gives it back.
    func handler(logger: Logger) -> HTTPConnectionPlaceHandler {
        HTTPConnectionPlaceHandler(admission: self, logger: logger)
    }
}

/// Holds a connection's place in the gateway's ``HTTPConnectionPlaces`` from the moment the
/// handler joins its pipeline until the connection closes (when every handler leaves it); a
/// connection refused a place is closed at once. It sits after the HTTP codec, so it sees each
/// request's parts and each answer's, and tells the places when a request begins (its head
/// read) and ends (its answer's end written).
final class HTTPConnectionPlaceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let admission: HTTPConnectionPlaces
    private let logger: Logger
    /// The address whose place this connection holds, nil when it holds none.
    private var placed: String?
    /// The requests whose heads have arrived and whose answers have not ended (more than one
    /// when a client pipelines them).
    private var inProgress = 0

    init(admission: HTTPConnectionPlaces, logger: Logger) {
        self.admission = admission
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = PeerAddress.group(of: context.channel.remoteAddress?.ipAddress)
        if let refusal = admission.admit(address, connection: ObjectIdentifier(self), channel: context.channel) {
            logger.warning("connection refused: \(refusal)")
            let channel = context.channel
            context.eventLoop.execute { channel.close(promise: nil) }
        } else {
            placed = address
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        guard let address = placed else { return }
        placed = nil
        if admission.release(address, connection: ObjectIdentifier(self)) {
            Task.detached { SystemHeap.trim() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if placed != nil, case .head = unwrapInboundIn(data) {
            inProgress += 1
            admission.requestBegan(ObjectIdentifier(self))
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if let address = placed, case .end = unwrapOutboundIn(data) {
            inProgress = max(inProgress - 1, 0)
            if inProgress == 0 { admission.requestEnded(ObjectIdentifier(self), channel: context.channel, address: address) }
        }
        context.write(data, promise: promise)
    }
}
