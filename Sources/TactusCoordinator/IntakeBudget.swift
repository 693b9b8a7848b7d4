import Synchronization
import TactusProtocol

/// The bytes of the submissions being received and prepared (hashed, probed, stored), or of
/// the rendered files being sent, held under a cap so that many large uploads or downloads at
/// once cannot exhaust the coordinator's memory.
///
/// A submission (or a download) over the cap is answered `busy` with `retry_after_ms`; one is
/// always allowed when nothing else is in hand, so a cap below the largest song accepted never
/// locks a song out. Shared by the poll loop (uploads, whose bytes it has received; render
/// downloads, ``RenderService``) and the intake threads (files under a library root, whose size
/// they learn on opening them).
final class IntakeBudget: Sendable {
    /// The most bytes in hand at once (one submission may exceed it alone).
    let limit: Int
    private let held = Mutex(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// The bytes in hand now.
    var inHand: Int { held.withLock { $0 } }

    /// Takes `bytes` for the submission named `name`, or throws `busy` when the submissions in
    /// hand already hold too much; each successful call needs one ``release(_:)``.
    func reserve(_ bytes: Int, name: String) throws(ErrorBody) {
        guard take(bytes) else {
            throw ErrorBody(
                code: .busy,
                message: "\(name): the server is receiving \(inHand) bytes of other submissions, near its limit of \(limit) "
                    + "(--max-intake-bytes); submit again shortly",
                retryAfterMs: 1000)
        }
    }

    /// Takes `bytes` when what is in hand leaves room for them (or nothing is in hand); each
    /// `true` needs one ``release(_:)``.
    func take(_ bytes: Int) -> Bool {
        held.withLock { held in
            guard held == 0 || held + bytes <= limit else { return false }
            held += bytes
            return true
        }
    }

    /// Gives back what ``reserve(_:name:)`` or ``take(_:)`` took.
    func release(_ bytes: Int) {
        held.withLock { $0 -= bytes }
    }
}
