import Foundation
import TactusDetector
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// The slow part of a submission, run on a background thread (``BackgroundWork``): reads the
/// song's bytes (sent inline, or a file under a library root, its size checked on the open
/// descriptor before it is read), hashes them, reads the audio header (through the
/// ``SongProbe``), looks up the analyses the library already has, and writes the blob durably
/// when some job remains to be done. It needs nothing of the poll loop's state; the loop then
/// stores and queues the jobs (``PreparedSubmission``).
struct SubmissionIntake: Sendable {
    /// A detector the submission asks for, with its declaration when one is known (an
    /// external detector no worker offers yet has none).
    struct Detector: Sendable {
        var name: String
        var descriptor: DetectorDescriptor?
    }

    let request: SubmitRequest
    let audio: [UInt8]?
    let detectors: [Detector]
    let library: Library
    let blobs: SongBlobs
    let probe: any SongProbe
    let maxSongBytes: Int
    let maxAudioBytes: Int
    let libraryRoots: [String]
    /// Where a file under a library root reserves its bytes while it is prepared (an upload's
    /// are reserved by the loop, which received them).
    let budget: IntakeBudget

    func prepare() throws -> PreparedSubmission {
        let (bytes, name) = try songBytes()
        defer { if audio == nil { budget.release(bytes.count) } }
        guard bytes.count <= maxSongBytes else {
            throw ErrorBody(
                code: .tooLarge,
                message: "\(name): \(bytes.count) bytes is over the server's song size limit of \(maxSongBytes) bytes")
        }
        let song = SongID(hashing: bytes)
        let record = try probeRecord(bytes, name: name, id: song)
        var requests = [JobRequest]()
        var answered = [JobInfo]()
        for detector in detectors {
            let given = request.params?[detector.name] ?? ParameterSet()
            if let descriptor = detector.descriptor, request.force != true, let stored = try storedAnalysis(song, descriptor, given) {
                answered.append(
                    JobInfo(
                        job: 0, song: song.hex, detector: detector.name, state: stored.record.status == .failed ? .failed : .done,
                        error: stored.record.failure.map { ErrorBody(code: ErrorCode(rawValue: $0.code), message: $0.message) }))
                continue
            }
            requests.append(JobRequest(detector: detector.name, params: given))
        }
        var createdBlob = false
        if !requests.isEmpty {
            createdBlob = !blobs.contains(song.hex)
            do {
                try blobs.put(bytes, id: song.hex)
            } catch {
                throw ErrorBody(
                    code: error.code == .diskFull ? .unavailable : .internal, message: "cannot store the song: \(error.message)",
                    retryAfterMs: error.code == .diskFull ? 60_000 : nil)
            }
        }
        return PreparedSubmission(
            song: record, requests: requests,
            answered: answered, createdBlob: createdBlob)
    }

    /// The song's bytes and name: the request's audio frame, or a file under a library root.
    private func songBytes() throws -> ([UInt8], String) {
        if let audio {
            return (audio, request.name ?? "upload")
        }
        guard let path = request.path else {
            throw ErrorBody(code: .badRequest, message: "submit needs the song's bytes or a path")
        }
        let file = try LibraryRoots(libraryRoots).open(path)
        guard file.size <= maxAudioBytes else {
            throw ErrorBody(code: .tooLarge, message: "\(path): \(file.size) bytes is over the limit of \(maxAudioBytes)")
        }
        try budget.reserve(file.size, name: path)
        let data: [UInt8]
        do {
            data = try file.read()
        } catch {
            budget.release(file.size)
            throw error
        }
        return (data, request.name ?? (path as NSString).lastPathComponent)
    }

    /// The probe's record of the song. A server-side file that is not audio is refused without
    /// the probe's description of its first bytes: the file may be anything the server can
    /// read, and its bytes are not the client's to see.
    private func probeRecord(_ bytes: [UInt8], name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        do {
            return try probe.record(of: bytes, name: name, id: id)
        } catch where error.code == .unsupportedFormat {
            guard let path = request.path, audio == nil else { throw error }
            throw ErrorBody(code: .unsupportedFormat, message: "\(path): \(bytes.count) bytes that are not audio Tactus recognises")
        }
    }

    /// A stored analysis with the detector's current version and the same resolved parameters.
    private func storedAnalysis(_ song: SongID, _ descriptor: DetectorDescriptor, _ given: ParameterSet) throws -> StoredAnalysis? {
        let resolved: ParameterSet
        do {
            resolved = try descriptor.resolve(given)
        } catch {
            throw ErrorBody(code: .invalidParameter, message: error.description)
        }
        return try library.analysis(of: song, detector: descriptor.name, version: descriptor.version, params: resolved)
    }
}

/// A submission ready to be queued: the song, the jobs still to do, the answers the library
/// already had, and whether its blob was written by this submission.
struct PreparedSubmission: Sendable {
    var song: SongRecord
    var requests: [JobRequest]
    var answered: [JobInfo]
    var createdBlob: Bool
}
