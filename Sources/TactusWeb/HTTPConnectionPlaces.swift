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
final class HTTPConnectionPlaces: Sendable {
    let maxConnections: Int
    let maxPerAddress: Int
    private let held = Mutex<Held>(Held())

    private struct Held {
        var total = 0
        var byAddress: [String: Int] = [:]
        /// The most connections held since the heap was last trimmed.
        var peak = 0
    }

    /// After a peak of at least this many connections, the heap is trimmed once half of them
    /// have closed.
    static let trimAfterPeak = 64

    init(maxConnections: Int, maxPerAddress: Int) {
        self.maxConnections = max(maxConnections, 1)
        self.maxPerAddress = max(1, min(maxPerAddress, maxConnections))
    }

    /// Takes a place for a connection from `address`, or says why there is none.
    func admit(_ address: String) -> String? {
        held.withLock { held in
            if held.byAddress[address, default: 0] >= maxPerAddress {
                return "\(address) holds \(maxPerAddress) connections, the most one address may"
            }
            guard held.total < maxConnections else { return "the gateway holds \(maxConnections) connections, the most it takes" }
            held.total += 1
            held.byAddress[address, default: 0] += 1
            held.peak = max(held.peak, held.total)
            return nil
        }
    }

    /// Gives back the place of a connection from `address`; true when the heap should now be
    /// trimmed (half of a large peak has closed since the last trim).
    func release(_ address: String) -> Bool {
        held.withLock { held in
            held.total -= 1
            let left = held.byAddress[address, default: 1] - 1
            held.byAddress[address] = left > 0 ? left : nil
            guard held.peak >= Self.trimAfterPeak, held.total <= held.peak / 2 else { return false }
            held.peak = held.total
            return true
        }
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

    init(admission: HTTPConnectionPlaces, logger: Logger) {
        self.admission = admission
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = PeerAddress.group(of: context.channel.remoteAddress?.ipAddress)
        if let refusal = admission.admit(address) {
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
        if admission.release(address) {
            Task.detached { SystemHeap.trim() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }
}
