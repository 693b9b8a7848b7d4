import Foundation
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
    var deadline: ContinuousClock.Instant
}

/// IDENTIFY: a scan's hashing done by the workers that share the library roots (they read the
/// files anyway when they analyse them), so the coordinator's own share of a song analysed in
/// place is its header and its records.
///
/// Each batch of a scan sends each worker that offers to identify one IDENTIFY at most, for the
/// files below its roots that are not over the song size limit, spread over the workers in
/// turn. A file no worker hashed (none shares its root; the worker refused it, ran out of its
/// time, was lost, or did not answer within ``identifyTimeout``) is hashed by the coordinator,
/// and so is any file whose worker's answer may not be used (``LibraryScan/Identity``). A
/// worker that lets a request time out, or whose answers identify fewer than half of their
/// files ``maximumFruitlessIdentifies`` times in a row, is asked no more on that connection:
/// every batch of a scan waits for its answers (a worker answering each request `unavailable`
/// just before a 5 s timeout held every scan 300 times longer, and one identifying a single
/// file of each 1.9 s later 150 times: attack round 8, M1).
extension CoordinatorLoop {
    /// How long a worker has to answer an IDENTIFY before the coordinator hashes its files (a
    /// worker hashes for about a second, then answers the files left `unavailable`).
    static let identifyTimeout: Duration = .seconds(2)
    /// The answers in a row that identify fewer than half of their files after which a worker
    /// is asked no more (one whose disk is that slow saves the coordinator little).
    static let maximumFruitlessIdentifies = 2

    /// Asks the workers that share the roots of `files` for the SHA-256 of those a scan must
    /// look at (not unchanged, not over the song size limit), then calls `then` with what they
    /// found (nil where no worker did), on the loop.
    func identities(of files: [LibraryScan.Found], then: @escaping ([LibraryScan.Identity?]) -> Void) {
        let batch = IdentityBatch(files: files, then: then)
        let identifiers = workers.all.filter { $0.identifies && $0.version >= .v2 }
        let sizeLimit = min(configuration.maxSongBytes, configuration.limits.maxAudioBytes)
        var requests: [[UInt8]: [Int]] = [:]
        var turn = 0
        for (index, found) in files.enumerated() where found.needsReading && found.entry.size <= sizeLimit {
            let candidates = identifiers.filter { $0.roots.contains(found.root) }
            guard !candidates.isEmpty else { continue }
            requests[candidates[turn % candidates.count].address, default: []].append(index)
            turn += 1
        }
        for (worker, indices) in requests {
            for part in stride(from: 0, to: indices.count, by: IdentifyBody.maximumFiles) {
                let chunk = Array(indices[part..<min(part + IdentifyBody.maximumFiles, indices.count)])
                let id = nextIdentifyRequest
                nextIdentifyRequest += 1
                let locations = chunk.map { JobLocation(root: files[$0].root, path: files[$0].entry.relative) }
                identifyRequests[id] = IdentifyRequest(worker: worker, indices: chunk, batch: batch, deadline: .now + Self.identifyTimeout)
                batch.waiting.insert(id)
                sendToWorker(worker, .identify(IdentifyBody(request: id, files: locations)))
            }
        }
        if batch.waiting.isEmpty { then(batch.identities) }
    }

    /// A worker's IDENTIFIED: the identities it found join its request's batch. An answer to a
    /// request this worker was not sent is ignored (its files are hashed by the coordinator once
    /// the request times out); an answer with another number of files is not used.
    func workerIdentified(_ address: [UInt8], _ body: IdentifiedBody) {
        guard let request = identifyRequests[body.request], request.worker == address else {
            logger.debug("discarded an IDENTIFIED for no request of this worker", metadata: ["request": "\(body.request)"])
            return
        }
        if body.files.count == request.indices.count {
            var identified = 0
            for (index, file) in zip(request.indices, body.files) {
                guard let song = file.sha256, let size = file.size, let mtimeNs = file.mtimeNs else { continue }
                request.batch.identities[index] = LibraryScan.Identity(song: song, size: Int(size), mtimeNs: mtimeNs)
                identified += 1
            }
            let fruitful = 2 * identified >= body.files.count
            if workers.identified(fruitful: fruitful, by: address) >= Self.maximumFruitlessIdentifies, workers[address]?.identifies == true {
                workers.stopIdentifying(address)
                logger.warning(
                    "a worker identified fewer than half of the files of \(Self.maximumFruitlessIdentifies) IDENTIFY in a row; asking it no more",
                    metadata: ["worker": "\(workers[address]?.id ?? "?")"])
            }
        } else {
            logger.warning(
                "a worker answered IDENTIFY with \(body.files.count) files of \(request.indices.count); hashing them here",
                metadata: ["worker": "\(workers[address]?.id ?? "?")"])
        }
        identifyRequestEnded(body.request)
    }

    /// Ends the requests sent to `worker`, gone: the coordinator hashes their files.
    func abandonIdentifyRequests(of worker: [UInt8]) {
        for id in identifyRequests.filter({ $0.value.worker == worker }).keys.sorted() { identifyRequestEnded(id) }
    }

    /// Ends the requests past their deadline at `now` (after reading the answers that have
    /// arrived): the coordinator hashes their files, and their workers are asked no more.
    func expireIdentifyRequests(at now: ContinuousClock.Instant) {
        guard identifyRequests.values.contains(where: { $0.deadline < now }) else { return }
        drainBackend()
        for (id, request) in identifyRequests.filter({ $0.value.deadline < now }).sorted(by: { $0.key < $1.key }) {
            if workers[request.worker]?.identifies == true {
                workers.stopIdentifying(request.worker)
                logger.warning(
                    "a worker did not answer IDENTIFY in time; hashing its files here, and asking it no more",
                    metadata: ["worker": "\(workers[request.worker]?.id ?? "?")", "files": "\(request.indices.count)"])
            }
            identifyRequestEnded(id)
        }
    }

    /// Moves every request's deadline `duration` later: the loop was not running meanwhile.
    func postponeIdentifyDeadlines(by duration: Duration) {
        for id in identifyRequests.keys { identifyRequests[id]?.deadline += duration }
    }

    private func identifyRequestEnded(_ id: Int64) {
        guard let request = identifyRequests.removeValue(forKey: id) else { return }
        let batch = request.batch
        batch.waiting.remove(id)
        if batch.waiting.isEmpty { batch.then(batch.identities) }
    }
}
