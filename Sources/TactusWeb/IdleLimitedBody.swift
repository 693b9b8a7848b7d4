import HTTPTypes
import Hummingbird
import TactusModel

/// A request's body read piece by piece and given up when fewer than ``progressBytes`` have come
/// in ``idle`` (about 2 KiB/s, which any upload passes), so a client that announces a large
/// upload and then sends nothing, or a byte now and then, cannot hold one of the gateway's places
/// for uploads for ever: the read is cancelled and the request fails `timeout` (408), and the
/// place is given back. The client most often sees its connection closed without an answer
/// (the cancelled read ends the connection's input); when the 408 is written instead, the server
/// then waits for the rest of the body, holding the connection (but no place) until the client
/// closes it. (The server's own idle timeout closes only connections between requests, and
/// those whose headers never end.)
///
/// ```swift
/// try await IdleLimitedBody(request.body, name: "song.flac").forEach { piece in try spool.append(piece) }
/// ```
struct IdleLimitedBody {
    let body: RequestBody
    /// The upload's name, for the error.
    let name: String
    let idle: Duration

    init(_ body: RequestBody, name: String, idle: Duration = WebGateway.idleTimeout) {
        self.body = body
        self.name = name
        self.idle = idle
    }

    /// The bytes that must come within each ``idle`` for the body to count as arriving.
    static let progressBytes = 64 << 10

    /// Calls `take` with each piece of the body in order. Throws ``HTTPFailure`` (408 `timeout`)
    /// when fewer than ``progressBytes`` come in ``idle``, and what reading the body or `take` throws.
    func forEach(_ take: (ByteBuffer) throws -> Void) async throws {
        let pieces = Pieces(body.makeAsyncIterator())
        var deadline = ContinuousClock.now + idle
        var sinceDeadline = 0
        while true {
            let piece: ByteBuffer?
            do {
                piece = try await pieces.next(within: ContinuousClock.now.duration(to: deadline))
            } catch is Stalled {
                throw HTTPFailure(
                    .requestTimeout, .timeout,
                    "\(name): fewer than \(Self.progressBytes) bytes of the body came in \(Int(idle.components.seconds)) s; "
                        + "the upload is given up")
            }
            guard let piece else { return }
            sinceDeadline += piece.readableBytes
            if sinceDeadline >= Self.progressBytes {
                sinceDeadline = 0
                deadline = .now + idle
            }
            try take(piece)
        }
    }

    private struct Stalled: Error {}

    /// The body's iterator, taken by one task at a time: the one reading the next piece, which
    /// races a timer (``next(within:)``).
    private final class Pieces: @unchecked Sendable {
        private var iterator: RequestBody.AsyncIterator

        init(_ iterator: RequestBody.AsyncIterator) {
            self.iterator = iterator
        }

        /// The next piece, nil at the end, or ``Stalled`` when none comes within `time` (the read
        /// is cancelled: the body's stream ends with the request).
        func next(within time: Duration) async throws -> ByteBuffer? {
            guard time > .zero else { throw Stalled() }
            return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask { try await self.iterator.next() }
                group.addTask {
                    try await Task.sleep(for: time)
                    throw Stalled()
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        }
    }
}
