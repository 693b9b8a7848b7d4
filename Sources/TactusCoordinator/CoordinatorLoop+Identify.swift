import Foundation
import Synchronization
import TactusLibraryService
import TactusModel
import TactusProtocol

/// Files of one scan batch whose SHA-256 workers were asked for (IDENTIFY): what they found so
/// far, the requests still out, and what to do once none is.
final class IdentityBatch {
    let files: [LibraryScan.Found]
    /// One entry per file: the identity a worker found, nil while none did.
    var identities: [LibraryScan.Identity?]
    /// The requests not answered yet.
    var waiting: Set<Int64> = []
    let then: ([LibraryScan.Identity?]) -> Void

    init(files: [LibraryScan.Found], then: @escaping ([LibraryScan.Identity?]) -> Void) {
        self.files = files
        identities = Array(repeating: nil, count: files.count)
        self.then = then
    }
}

/// One IDENTIFY sent: to which worker, for which files of which batch, until when.
struct IdentifyRequest {
    let worker: [UInt8]
    /// The files' places in the batch, in the order of the request.
    let indices: [Int]
    let batch: IdentityBatch
    let deadline: ContinuousClock.Instant
}

/// Counts the files of a scan whose workers' hash was used (from the intake threads).
final class ScanCounter: Sendable {
    private let count = Atomic<Int>(0)

    func add() { count.add(1, ordering: .relaxed) }

    /// The count, nil when none.
    var value: Int? {
        let value = count.load(ordering: .relaxed)
        return value > 0 ? value : nil
    }
}

/// IDENTIFY: a scan's hashing done by the workers that share the library roots (they read the
/// files anyway when they analyse them), so the coordinator's own share of a song analysed in
/// place is its header and its records. A file no worker could hash (none shares its root,
/// the worker failed, was lost or took longer than ``identifyTimeout``) is hashed by the
/// coordinator as before, and so is a file whose size or time changed since its worker read it.
extension CoordinatorLoop {
    /// Bytes asked of one worker in one IDENTIFY: about a tenth of a second of hashing, so the
    /// worker's heartbeats, sent by the thread that hashes, are not held up.
    static let identifyBytes = 192 << 20
    /// How long a worker has to answer an IDENTIFY before the coordinator hashes its files.
    static let identifyTimeout: Duration = .seconds(5)

    /// Asks the workers that share the roots of `files` for the SHA-256 of those a scan must
    /// look at (not unchanged), spreading them over the workers in turn, then calls `then` with
    /// what they found (nil where no worker did), on the loop.
    func identities(of files: [LibraryScan.Found], then: @escaping ([LibraryScan.Identity?]) -> Void) {
        let batch = IdentityBatch(files: files, then: then)
        let identifiers = workers.all.filter { $0.identifies && $0.version >= .v2 }
        var requests: [(worker: [UInt8], indices: [Int], bytes: Int)] = []
        var open: [[UInt8]: Int] = [:]
        var turn = 0
        for (index, found) in files.enumerated() where !found.isUnchanged {
            let candidates = identifiers.filter { $0.roots.contains(found.root) }
            guard !candidates.isEmpty else { continue }
            let worker = candidates[turn % candidates.count].address
            turn += 1
            if let current = open[worker], requests[current].indices.count < IdentifyBody.maximumFiles,
                requests[current].bytes + found.entry.size <= Self.identifyBytes
            {
                requests[current].indices.append(index)
                requests[current].bytes += found.entry.size
            } else {
                open[worker] = requests.count
                requests.append((worker, [index], found.entry.size))
            }
        }
        for request in requests {
            let id = nextIdentifyRequest
            nextIdentifyRequest += 1
            let locations = request.indices.map { JobLocation(root: files[$0].root, path: files[$0].entry.relative) }
            identifyRequests[id] = IdentifyRequest(
                worker: request.worker, indices: request.indices, batch: batch, deadline: .now + Self.identifyTimeout)
            batch.waiting.insert(id)
            sendToWorker(request.worker, .identify(IdentifyBody(request: id, files: locations)))
        }
        if batch.waiting.isEmpty { then(batch.identities) }
    }

    /// A worker's IDENTIFIED: the identities it found join its request's batch. An answer to a
    /// request this worker was not sent, or with another number of files, is ignored (its
    /// files are hashed by the coordinator once the request times out, or at once for the
    /// latter).
    func workerIdentified(_ address: [UInt8], _ body: IdentifiedBody) {
        guard let request = identifyRequests[body.request], request.worker == address else {
            logger.info("discarded an IDENTIFIED for no request of this worker", metadata: ["request": "\(body.request)"])
            return
        }
        if body.files.count == request.indices.count {
            for (index, file) in zip(request.indices, body.files) {
                guard let sha256 = file.sha256, let song = SongID(sha256), let size = file.size, let mtimeNs = file.mtimeNs else { continue }
                request.batch.identities[index] = LibraryScan.Identity(song: song, size: Int(size), mtimeNs: mtimeNs)
            }
        } else {
            logger.warning(
                "a worker answered IDENTIFY with \(body.files.count) files of \(request.indices.count); hashing them here",
                metadata: ["worker": "\(workers[address]?.id ?? "?")"])
        }
        identifyRequestEnded(body.request)
    }

    /// Ends the requests sent to a worker that is gone, or past their deadline at `now`: their
    /// files are hashed by the coordinator.
    func abandonIdentifyRequests(of worker: [UInt8]? = nil, at now: ContinuousClock.Instant = .now) {
        let ended = identifyRequests.filter { entry in
            if let worker { return entry.value.worker == worker }
            return entry.value.deadline < now
        }
        for (id, request) in ended.sorted(by: { $0.key < $1.key }) {
            if worker == nil {
                logger.warning(
                    "a worker did not answer IDENTIFY in time; hashing its files here",
                    metadata: ["worker": "\(workers[request.worker]?.id ?? "?")", "files": "\(request.indices.count)"])
            }
            identifyRequestEnded(id)
        }
    }

    private func identifyRequestEnded(_ id: Int64) {
        guard let request = identifyRequests.removeValue(forKey: id) else { return }
        let batch = request.batch
        batch.waiting.remove(id)
        if batch.waiting.isEmpty { batch.then(batch.identities) }
    }
}
