import Synchronization
import TactusModel
import TactusProtocol

/// How many exports of the library the gateway builds at once. An export holds every song of
/// its range and the whole document while it is made (about 250 MB for 100,000 songs) and asks
/// the coordinator for page after page: past the limit a request is answered 429 `busy` with
/// `Retry-After`, so that many tabs opening the export link cannot take the gateway's memory or
/// the coordinator's reads. When the last export at once ends, the heap is handed back to the
/// system (``SystemHeap/trim()``): the gateway does not keep the largest export's memory.
final class ExportAdmission: Sendable {
    let maxExports: Int
    private let running = Mutex(0)

    /// How long a refused client is asked to wait: about the time an export of a large library takes.
    static let retryAfterMs = 10_000

    init(maxExports: Int) {
        self.maxExports = max(maxExports, 1)
    }

    /// Runs `export` if fewer than ``maxExports`` are running; throws 429 `busy` otherwise.
    func run<T>(_ export: () async throws -> T) async throws -> T {
        let admitted = running.withLock { running in
            guard running < maxExports else { return false }
            running += 1
            return true
        }
        guard admitted else {
            throw HTTPFailure(
                .tooManyRequests, .busy,
                "the gateway is making as many exports as it makes at once (\(maxExports)); try again later",
                retryAfterMs: Self.retryAfterMs)
        }
        defer {
            if running.withLock({ running in
                running -= 1
                return running == 0
            }) {
                SystemHeap.trim()
            }
        }
        return try await export()
    }
}
