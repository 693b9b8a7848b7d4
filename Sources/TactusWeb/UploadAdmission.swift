import NIOCore
import Synchronization
import TactusProtocol
import TactusZMQ

/// How many uploads the gateway takes at once, and how many of their bytes it holds (spooled,
/// or on their way to the coordinator). An upload past either limit is answered 429 `busy` with
/// `Retry-After`: at once when it is one too many or its `Content-Length` does not fit, or as
/// soon as its bytes, arriving without a length, would pass the limit.
///
/// A client beyond the gateway's machine (an IPv4 address or an IPv6 /64 network, as
/// ``TokenGuesses`` counts them) holds at most half of the places (``maxUploadsPerClient``):
/// four slow uploads from one address, a few KiB a second each, otherwise kept every other
/// client from uploading for as long as they lasted. Clients on the gateway's own machine all
/// come from loopback, one address: they share every place (``client(of:)``).
final class UploadAdmission: Sendable {
    let maxUploads: Int
    let maxBytes: Int
    /// The places one client may hold at once: half of them, at least one.
    var maxUploadsPerClient: Int { max(1, maxUploads / 2) }
    private let held = Mutex<(uploads: Int, bytes: Int, byClient: [String: Int])>((0, 0, [:]))

    /// How long a refused client is asked to wait: about the time an upload takes to finish.
    static let retryAfterMs = 5000

    init(maxUploads: Int, maxBytes: Int) {
        self.maxUploads = max(maxUploads, 1)
        self.maxBytes = max(maxBytes, 1)
    }

    /// The client whose uploads share ``maxUploadsPerClient`` places: the address's group, or nil
    /// for loopback and a Unix socket (this machine's users, who may hold every place).
    static func client(of address: SocketAddress?) -> String? {
        guard let ip = address?.ipAddress, !PeerAddress.isLoopback(ip) else { return nil }
        return TokenGuesses.client(address)
    }

    /// A place for an upload from `client` (nil: one of this machine's) that announces
    /// `declaredBytes` (nil: sent without a length).
    func admit(declaredBytes: Int?, name: String, client: String?) throws(HTTPFailure) -> UploadPass {
        let bytes = declaredBytes ?? 0
        let refusal: String? = held.withLock { held in
            if let client, held.byClient[client, default: 0] >= maxUploadsPerClient {
                return "your address is sending as many uploads as one address may at once (\(maxUploadsPerClient))"
            }
            guard held.uploads < maxUploads, held.bytes + bytes <= maxBytes else {
                return "the gateway is receiving as many uploads as it takes at once (\(maxUploads) uploads, \(maxBytes) bytes)"
            }
            held.uploads += 1
            held.bytes += bytes
            if let client { held.byClient[client, default: 0] += 1 }
            return nil
        }
        if let refusal {
            throw HTTPFailure(.tooManyRequests, .busy, "\(name): \(refusal); try again later", retryAfterMs: Self.retryAfterMs)
        }
        return UploadPass(admission: self, bytes: bytes, name: name, client: client)
    }

    /// Holds `more` bytes for an upload already admitted; false when they do not fit.
    fileprivate func hold(_ more: Int) -> Bool {
        held.withLock { held in
            guard held.bytes + more <= maxBytes else { return false }
            held.bytes += more
            return true
        }
    }

    fileprivate func release(bytes: Int, client: String?) {
        held.withLock { held in
            held.uploads -= 1
            held.bytes -= bytes
            if let client {
                let left = held.byClient[client, default: 1] - 1
                held.byClient[client] = left > 0 ? left : nil
            }
        }
    }
}

/// An admitted upload's place, until ``end()``.
final class UploadPass {
    private let admission: UploadAdmission
    private let name: String
    private let client: String?
    private(set) var bytes: Int
    private var ended = false

    fileprivate init(admission: UploadAdmission, bytes: Int, name: String, client: String?) {
        self.admission = admission
        self.bytes = bytes
        self.name = name
        self.client = client
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
        admission.release(bytes: bytes, client: client)
    }
}
