import HTTPTypes
import Hummingbird
import TactusModel

/// A request's body read piece by piece and given up when no piece has come for ``idle``, so a
/// client that announces a large upload and then sends nothing (or a byte now and then) cannot
/// hold one of the gateway's places for uploads for ever: the read is cancelled, which closes
/// the connection (the request fails `timeout`, 408, in the gateway's metrics; the client, whose
/// body never ended, gets no answer), and the place is given back. (The server's own idle
/// timeout closes only connections between requests, and those whose headers never end.)
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

    /// Calls `take` with each piece of the body in order. Throws ``HTTPFailure`` (408 `timeout`)
    /// when no piece comes for ``idle``, and what reading the body or `take` throws.
    func forEach(_ take: (ByteBuffer) throws -> Void) async throws {
        let pieces = Pieces(body.makeAsyncIterator())
        while true {
            let piece: ByteBuffer?
            do {
                piece = try await pieces.next(within: idle)
            } catch is Stalled {
                throw HTTPFailure(
                    .requestTimeout, .timeout,
                    "\(name): no byte of the body came for \(Int(idle.components.seconds)) s; the upload is given up")
            }
            guard let piece else { return }
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

        /// The next piece, nil at the end, or ``Stalled`` when none comes within `idle` (the read
        /// is cancelled: the body's stream ends with the request).
        func next(within idle: Duration) async throws -> ByteBuffer? {
            try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask { try await self.iterator.next() }
                group.addTask {
                    try await Task.sleep(for: idle)
                    throw Stalled()
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        }
    }
}
