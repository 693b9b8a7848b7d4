import TactusProtocol

/// Decodes the workers' messages for the loop, each worker's in the order it sent them, the large
/// ones on a thread of their own: a RESULT of megabytes of JSON (thousands of windows) takes the
/// JSON decoder a second or more on a busy machine, which the loop, answering every client, must
/// not spend. A small message (a HEARTBEAT, a READY, a RESULT of a few windows) is decoded at once,
/// unless one of its sender's is being decoded: it then waits for it.
///
/// Belongs to the loop's thread (only the decoding crosses threads).
final class WorkerMessageReader {
    /// A message decoded, or why it is not one.
    typealias Decoded = Result<(message: WorkerMessage, version: ProtocolVersion), ProtocolError>

    /// Messages of more bytes than this (frames after the routing id) are decoded off the loop.
    static let backgroundBytes = 64 << 10
    /// Messages a worker may send while one of its messages is being decoded; further ones are
    /// dropped (a worker sends a HEARTBEAT every 2.5 s, and waits for a JOB before a RESULT).
    static let waitingLimit = 64

    /// Bytes of the messages being decoded or waiting beyond which the loop reads no more from
    /// the backend (``isFull``) until some are handled: workers (or anyone who connects) may send
    /// large messages faster than they are decoded, and each waits in memory meanwhile.
    static let heldBytesLimit = 64 << 20

    /// The thread that decodes the large messages; the loop polls its doorbell.
    let work: BackgroundWork
    private let limits: ProtocolLimits
    /// The messages waiting, by routing id, for the one of their sender's being decoded.
    private var waiting: [[UInt8]: [[[UInt8]]]] = [:]
    /// Bytes of the messages being decoded or waiting.
    private(set) var heldBytes = 0

    /// Whether the messages in hand are over ``heldBytesLimit``: read no more until they are not.
    var isFull: Bool { heldBytes >= Self.heldBytesLimit }

    init(limits: ProtocolLimits) throws(CoordinatorError) {
        self.limits = limits
        work = try BackgroundWork(threads: 1, name: "tactus-worker-messages")
    }

    /// Decodes `frames` (the routing id first) and gives `handle` the frames and the outcome:
    /// at once, or on the loop's thread once decoded (``BackgroundWork/deliver()``) and after
    /// the sender's earlier messages. False when the message was dropped (``waitingLimit``).
    func read(_ frames: [[UInt8]], then handle: @escaping ([[UInt8]], Decoded) -> Void) -> Bool {
        let address = frames[0]
        if let queued = waiting[address] {
            guard queued.count < Self.waitingLimit else { return false }
            waiting[address] = queued + [frames]
            heldBytes += Self.size(frames)
            return true
        }
        let body = Array(frames.dropFirst())
        let limits = self.limits
        let decode: @Sendable () -> Decoded = { Result { () throws(ProtocolError) in try WorkerMessage.decode(body, limits: limits) } }
        let size = Self.size(frames)
        guard size > Self.backgroundBytes else {
            handle(frames, decode())
            return true
        }
        waiting[address] = []
        heldBytes += size
        work.run(decode) { [self] decoded in
            heldBytes -= size
            handle(frames, decoded)
            // In order: a large one among them is decoded in turn, and those after it wait again.
            for next in waiting.removeValue(forKey: address) ?? [] {
                heldBytes -= Self.size(next)
                _ = read(next, then: handle)
            }
        }
        return true
    }

    /// The bytes of a message's frames after the routing id.
    static func size(_ frames: [[UInt8]]) -> Int {
        frames.dropFirst().reduce(0) { $0 + $1.count }
    }
}
