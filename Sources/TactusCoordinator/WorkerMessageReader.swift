import TactusProtocol

/// Decodes the workers' messages for the loop, each worker's in the order it sent them, the large
/// ones on a thread of their own: a RESULT of megabytes of JSON (thousands of windows) takes the
/// JSON decoder a second or more on a busy machine, which the loop, answering every client, must
/// not spend. A small message (a HEARTBEAT, a READY, a RESULT of a few windows) is decoded at once,
/// unless one of its sender's is being decoded: it then waits for it.
///
/// The loop reads the backend at all times (libzmq, holding a connection's input while the loop
/// does not read, can fail an assertion when that peer then goes), so a message that cannot be
/// held is dropped rather than left waiting: one over what its sender may send now, one of a
/// sender that has too many waiting, or one that would take the messages held past their budget.
///
/// Belongs to the loop's thread (only the decoding crosses threads).
final class WorkerMessageReader {
    /// A message decoded, or why it is not one.
    typealias Decoded = Result<(message: WorkerMessage, version: ProtocolVersion), ProtocolError>

    /// Why a message was dropped unread.
    enum Drop: String, CaseIterable {
        /// Larger than anything its sender may send now (``largestMessage(registered:running:limits:)``).
        case unexpected = "larger than its sender may send now"
        /// Its sender has ``waitingLimit`` messages waiting for an earlier one of its own.
        case senderBehind = "its sender's earlier messages are still being read"
        /// The messages held would pass ``heldBytesLimit``.
        case overBudget = "the messages being read are over their budget"
    }

    /// The largest message (bytes after the routing id) a peer may send: a worker running a job
    /// its RESULT (any size the frame bound lets through), another worker its HEARTBEAT or
    /// IDENTIFIED (``idleBytes``), a peer not registered its READY (a body).
    static func largestMessage(registered: Bool, running: Bool, limits: ProtocolLimits) -> Int {
        guard registered else { return limits.maxBodyBytes }
        return running ? .max : idleBytes
    }

    /// The largest message of a worker without a job: an IDENTIFIED of 64 files is a few kB.
    static let idleBytes = 1 << 20

    /// Messages of more bytes than this (frames after the routing id) are decoded off the loop.
    static let backgroundBytes = 64 << 10
    /// Messages a worker may send while one of its messages is being decoded; further ones are
    /// dropped (a worker sends a HEARTBEAT every 2.5 s, and waits for a JOB before a RESULT).
    static let waitingLimit = 64

    /// Bytes of the messages being decoded or waiting beyond which further ones are dropped:
    /// workers (or anyone who connects) may send large messages faster than they are decoded,
    /// and each waits in memory meanwhile. An honest RESULT is at most a few megabytes.
    static let heldBytesLimit = 64 << 20

    /// The thread that decodes the large messages; the loop polls its doorbell.
    let work: BackgroundWork
    private let limits: ProtocolLimits
    /// The messages waiting, by routing id, for the one of their sender's being decoded.
    private var waiting: [[UInt8]: [[[UInt8]]]] = [:]
    /// Bytes of the messages being decoded or waiting.
    private(set) var heldBytes = 0
    /// The messages dropped since they were last reported (``takeDrops(at:)``), and their bytes.
    private var drops: [Drop: (count: Int, bytes: Int)] = [:]
    private var lastDropReport: ContinuousClock.Instant?

    init(limits: ProtocolLimits) throws(CoordinatorError) {
        self.limits = limits
        work = try BackgroundWork(threads: 1, name: "tactus-worker-messages")
    }

    /// Decodes `frames` (the routing id first) and gives `handle` the frames and the outcome:
    /// at once, or on the loop's thread once decoded (``BackgroundWork/deliver()``) and after
    /// the sender's earlier messages; or drops the message (``takeDrops(at:)`` reports it).
    func read(_ frames: [[UInt8]], then handle: @escaping ([[UInt8]], Decoded) -> Void) {
        let address = frames[0]
        let size = Self.size(frames)
        if let queued = waiting[address] {
            guard queued.count < Self.waitingLimit else { return dropped(.senderBehind, bytes: size) }
            guard heldBytes + size <= Self.heldBytesLimit else { return dropped(.overBudget, bytes: size) }
            waiting[address] = queued + [frames]
            heldBytes += size
            return
        }
        let body = Array(frames.dropFirst())
        let limits = self.limits
        let decode: @Sendable () -> Decoded = { Result { () throws(ProtocolError) in try WorkerMessage.decode(body, limits: limits) } }
        guard size > Self.backgroundBytes else {
            handle(frames, decode())
            return
        }
        guard heldBytes + size <= Self.heldBytesLimit else { return dropped(.overBudget, bytes: size) }
        waiting[address] = []
        heldBytes += size
        work.run(decode) { [self] decoded in
            heldBytes -= size
            handle(frames, decoded)
            // In order: a large one among them is decoded in turn, and those after it wait again.
            for next in waiting.removeValue(forKey: address) ?? [] {
                heldBytes -= Self.size(next)
                read(next, then: handle)
            }
        }
    }

    /// Counts a message dropped for `reason`.
    func dropped(_ reason: Drop, bytes: Int) {
        drops[reason, default: (0, 0)].count += 1
        drops[reason, default: (0, 0)].bytes += bytes
    }

    /// The messages dropped since the last report, by reason, at most once per
    /// ``dropReportInterval`` (nil when it is not time yet, or none was dropped).
    func takeDrops(at now: ContinuousClock.Instant = .now) -> [Drop: (count: Int, bytes: Int)]? {
        guard !drops.isEmpty, lastDropReport.map({ now - $0 >= Self.dropReportInterval }) ?? true else { return nil }
        lastDropReport = now
        defer { drops.removeAll() }
        return drops
    }

    /// How often dropped messages are reported: a flood is one line every 10 s.
    static let dropReportInterval: Duration = .seconds(10)

    /// The bytes of a message's frames after the routing id.
    static func size(_ frames: [[UInt8]]) -> Int {
        frames.dropFirst().reduce(0) { $0 + $1.count }
    }
}
