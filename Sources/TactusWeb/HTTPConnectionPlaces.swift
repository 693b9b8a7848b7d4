import Logging
import NIOCore
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
/// connection that has waited longest, at least ``evictableAfter``, without sending a whole
/// request head: 2,048 connections from four addresses sending their heads a byte every 5 s
/// locked every other client out (attack round 7), where a browser's request head arrives in
/// one piece.
final class HTTPConnectionPlaces: Sendable {
    let maxConnections: Int
    let maxPerAddress: Int
    private let held = Mutex<Held>(Held())

    private struct Held {
        var total = 0
        var byAddress: [String: Int] = [:]
        /// The most connections held since the heap was last trimmed.
        var peak = 0
        /// The connections that have not sent a whole request head yet, by connection.
        var unfinished: [ObjectIdentifier: Unfinished] = [:]
        /// Connections closed to make room, whose places were given back then.
        var evicted: Set<ObjectIdentifier> = []
    }

    /// A connection still sending its first request head.
    private struct Unfinished {
        let channel: any Channel
        let address: String
        let opened: ContinuousClock.Instant
    }

    /// How long a connection may send its first request head before a newcomer may take its place.
    static let evictableAfter = Duration.seconds(2)

    /// After a peak of at least this many connections, the heap is trimmed once half of them
    /// have closed.
    static let trimAfterPeak = 64

    init(maxConnections: Int, maxPerAddress: Int) {
        self.maxConnections = max(maxConnections, 1)
        self.maxPerAddress = max(1, min(maxPerAddress, maxConnections))
    }

    /// Takes a place for a connection from `address`, or says why there is none. `connection`
    /// (with its `channel`) is the connection, which waits for its first request head until
    /// ``headArrived(_:)``; when every place is taken, the connection that has waited longest
    /// for its head (at least ``evictableAfter``) is closed and gives its place.
    func admit(_ address: String, connection: ObjectIdentifier? = nil, channel: (any Channel)? = nil, now: ContinuousClock.Instant = .now) -> String? {
        let (refusal, evicted) = held.withLock { held -> (String?, (any Channel)?) in
            if held.byAddress[address, default: 0] >= maxPerAddress {
                return ("\(address) holds \(maxPerAddress) connections, the most one address may", nil)
            }
            var evicted: (any Channel)?
            if held.total >= maxConnections {
                guard let (oldest, waiting) = held.unfinished.min(by: { $0.value.opened < $1.value.opened }),
                    now - waiting.opened >= Self.evictableAfter
                else { return ("the gateway holds \(maxConnections) connections, the most it takes", nil) }
                held.unfinished[oldest] = nil
                held.evicted.insert(oldest)
                Self.giveBack(waiting.address, in: &held)
                evicted = waiting.channel
            }
            held.total += 1
            held.byAddress[address, default: 0] += 1
            held.peak = max(held.peak, held.total)
            if let connection, let channel { held.unfinished[connection] = Unfinished(channel: channel, address: address, opened: now) }
            return (nil, evicted)
        }
        evicted?.close(promise: nil)
        return refusal
    }

    /// The connection has sent a whole request head: it keeps its place.
    func headArrived(_ connection: ObjectIdentifier) {
        held.withLock { _ = $0.unfinished.removeValue(forKey: connection) }
    }

    /// Gives back the place of a connection from `address` (unless it was given when the
    /// connection was closed to make room); true when the heap should now be trimmed (half of
    /// a large peak has closed since the last trim).
    func release(_ address: String, connection: ObjectIdentifier? = nil) -> Bool {
        held.withLock { held in
            if let connection {
                held.unfinished[connection] = nil
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
/// connection refused a place is closed at once.
final class HTTPConnectionPlaceHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let admission: HTTPConnectionPlaces
    private let logger: Logger
    /// The address whose place this connection holds, nil when it holds none.
    private var placed: String?
    /// Whether a whole request head has arrived.
    private var headSeen = false

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

    /// The first part read is a request's head (the HTTP decoder before this handler passes on
    /// nothing until a whole head has arrived).
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headSeen {
            headSeen = true
            admission.headArrived(ObjectIdentifier(self))
        }
        context.fireChannelRead(data)
    }
}
