import Synchronization
import TactusProtocol

/// How many uploads the gateway takes at once, and how many of their bytes it holds (spooled,
/// or on their way to the coordinator). An upload past either limit is answered 429 `busy` with
/// `Retry-After`: at once when it is one too many or its `Content-Length` does not fit, or as
/// soon as its bytes, arriving without a length, would pass the limit.
final class UploadAdmission: Sendable {
    let maxUploads: Int
    let maxBytes: Int
    private let held = Mutex<(uploads: Int, bytes: Int)>((0, 0))

    /// How long a refused client is asked to wait: about the time an upload takes to finish.
    static let retryAfterMs = 5000

    init(maxUploads: Int, maxBytes: Int) {
        self.maxUploads = max(maxUploads, 1)
        self.maxBytes = max(maxBytes, 1)
    }

    /// A place for an upload that announces `declaredBytes` (nil: sent without a length).
    func admit(declaredBytes: Int?, name: String) throws(HTTPFailure) -> UploadPass {
        let bytes = declaredBytes ?? 0
        let admitted = held.withLock { held in
            guard held.uploads < maxUploads, held.bytes + bytes <= maxBytes else { return false }
            held.uploads += 1
            held.bytes += bytes
            return true
        }
        guard admitted else {
            throw HTTPFailure(
                .tooManyRequests, .busy,
                "\(name): the gateway is receiving as many uploads as it takes at once (\(maxUploads) uploads, \(maxBytes) bytes); "
                    + "try again later", retryAfterMs: Self.retryAfterMs)
        }
        return UploadPass(admission: self, bytes: bytes, name: name)
    }

    /// Holds `more` bytes for an upload already admitted; false when they do not fit.
    fileprivate func hold(_ more: Int) -> Bool {
        held.withLock { held in
            guard held.bytes + more <= maxBytes else { return false }
            held.bytes += more
            return true
        }
    }

    fileprivate func release(bytes: Int) {
        held.withLock { held in
            held.uploads -= 1
            held.bytes -= bytes
        }
    }
}

/// An admitted upload's place, until ``end()``.
final class UploadPass {
    private let admission: UploadAdmission
    private let name: String
    private(set) var bytes: Int
    private var ended = false

    fileprivate init(admission: UploadAdmission, bytes: Int, name: String) {
        self.admission = admission
        self.bytes = bytes
        self.name = name
    }

    /// Makes sure `total` bytes are held for the upload, holding more when it grew past what it announced.
    func hold(total: Int) throws(HTTPFailure) {
        guard total > bytes else { return }
        guard admission.hold(total - bytes) else {
            throw HTTPFailure(
                .tooManyRequests, .busy,
                "\(name): the uploads in progress hold the \(admission.maxBytes) bytes the gateway takes at once; try again later",
                retryAfterMs: UploadAdmission.retryAfterMs)
        }
        bytes = total
    }

    /// Gives the place and the bytes back (once).
    func end() {
        guard !ended else { return }
        ended = true
        admission.release(bytes: bytes)
    }
}
