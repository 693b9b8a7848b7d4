import Foundation
import TactusDetector
import TactusLibraryRoots
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// The slow part of a submission, run on a background thread (``BackgroundWork``): hashes the
/// song (sent inline; a file under a library root through the ``SongProbe``, its size checked on
/// the open descriptor first), reads the audio header (through the ``SongProbe``),
/// looks up the analyses the library already has, and writes an upload's blob durably when
/// some job remains to be done (a file under a root is never copied). It needs nothing of the poll loop's state; the loop then
/// stores and queues the jobs (``PreparedSubmission``).
struct SubmissionIntake: Sendable {
    /// A detector the submission asks for, with its declaration when one is known (an
    /// external detector no worker offers yet has none).
    struct Detector: Sendable {
        var name: String
        var descriptor: DetectorDescriptor?
    }

    /// A finished upload's file: its header is read on the intake thread, its bytes never
    /// loaded whole.
    struct UploadedFile: Sendable {
        var path: String
        var size: Int
        /// The id of the bytes received (hashed as the chunks arrived), checked against the
        /// SHA-256 announced (``UploadBook/Upload/receivedSong(name:)``).
        var song: SongID
    }

    let request: SubmitRequest
    let audio: [UInt8]?
    let detectors: [Detector]
    let library: Library
    let blobs: SongBlobs
    let probe: any SongProbe
    let maxSongBytes: Int
    let maxAudioBytes: Int
    let libraryRoots: LibraryRoots
    /// The song's file when it was uploaded in chunks (`upload`).
    var uploaded: UploadedFile? = nil

    func prepare() throws -> PreparedSubmission {
        if let uploaded { return try prepareChunkedUpload(uploaded) }
        guard audio == nil, let path = request.path else {
            guard let bytes = audio else {
                throw ErrorBody(code: .badRequest, message: "submit needs the song's bytes, an upload or a path")
            }
            return try prepareUpload(bytes, song: SongID(hashing: bytes), name: request.name ?? "upload")
        }
        let file = try libraryRoots.open(path)
        return try prepare(file, name: request.name ?? (path as NSString).lastPathComponent)
    }

    /// A song uploaded by the client: hashed, probed, and written to the blob store when some
    /// job remains to be done (until its jobs end).
    private func prepareUpload(_ bytes: [UInt8], song: SongID, name: String) throws -> PreparedSubmission {
        guard bytes.count <= maxSongBytes else {
            throw ErrorBody(
                code: .tooLarge,
                message: "\(name): \(bytes.count) bytes is over the server's song size limit of \(maxSongBytes) bytes")
        }
        let record = try probe.record(of: bytes, name: name, id: song)
        var prepared = try jobs(for: record)
        if !prepared.requests.isEmpty {
            prepared.createdBlob = !blobs.contains(song)
            try store { () throws(SongBlobError) in try blobs.put(bytes, id: song) }
        }
        return prepared
    }

    /// Runs `write`, a write to the blob store, answering its failure as the client sees it.
    private func store(_ write: () throws(SongBlobError) -> Void) throws(ErrorBody) {
        do {
            try write()
        } catch {
            throw ErrorBody(
                code: error.code == .diskFull ? .unavailable : .internal, message: "cannot store the song: \(error.message)",
                retryAfterMs: error.code == .diskFull ? 60_000 : nil)
        }
    }

    /// A song uploaded in chunks (its hash, computed as the chunks arrived, already checked
    /// against the SHA-256 announced): its header read through its file, and the file itself
    /// kept as the song's blob (a link, not a copy).
    private func prepareChunkedUpload(_ uploaded: UploadedFile) throws -> PreparedSubmission {
        let name = request.name ?? "upload"
        let song = uploaded.song
        guard uploaded.size <= maxSongBytes else {
            throw ErrorBody(
                code: .tooLarge,
                message: "\(name): \(uploaded.size) bytes is over the server's song size limit of \(maxSongBytes) bytes")
        }
        let record = try probe.record(ofFileAt: uploaded.path, size: uploaded.size, name: name, id: song)
        var prepared = try jobs(for: record)
        if !prepared.requests.isEmpty {
            prepared.createdBlob = !blobs.contains(song)
            try store { () throws(SongBlobError) in try blobs.put(linking: uploaded.path, size: uploaded.size, id: song) }
        }
        return prepared
    }

    /// A file below a library root, analysed in place: its size is checked on the open
    /// descriptor before anything is read, its header is read and its bytes hashed through
    /// the descriptor in bounded pieces (unless `song` is given: a worker hashed the file as it
    /// is), and nothing is copied (the workers open the file, or get its bytes read from it
    /// when the job is sent). The song's location comes with it.
    func prepare(_ file: LibraryFile, name: String, song: SongID? = nil) throws -> PreparedSubmission {
        let (record, known) = try library.identify(
            file, limit: min(maxSongBytes, maxAudioBytes), song: song, hash: { [probe] file in try probe.songID(of: file) }
        ) { song in
            try probeRecord(file, name: name, id: song)
        }
        var prepared = try jobs(for: record)
        prepared.location = file.location
        prepared.songWasKnown = known
        return prepared
    }

    /// The jobs still to do for the song `record` (the analyses the library already has are
    /// answered from it, unless the request forces a new analysis).
    private func jobs(for record: SongRecord) throws -> PreparedSubmission {
        var requests = [JobRequest]()
        var answered = [JobInfo]()
        for detector in detectors {
            let given = request.params?[detector.name] ?? ParameterSet()
            if let descriptor = detector.descriptor, request.force != true, let stored = try storedAnalysis(record.id, descriptor, given) {
                answered.append(
                    JobInfo(
                        job: 0, song: record.id, detector: detector.name, state: stored.record.status == .failed ? .failed : .done,
                        error: stored.record.failure.map(ErrorBody.init)))
                continue
            }
            requests.append(JobRequest(detector: detector.name, params: given))
        }
        return PreparedSubmission(song: record, requests: requests, answered: answered, createdBlob: false)
    }

    /// The probe's record of a file below a library root. A file that is not audio is refused
    /// without the probe's description of its first bytes: the file may be anything the
    /// server can read, and its bytes are not the client's to see.
    private func probeRecord(_ file: LibraryFile, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        do {
            return try probe.record(of: file, name: name, id: id)
        } catch where error.code == .unsupportedFormat {
            throw ErrorBody(code: .unsupportedFormat, message: "\(file.path): \(file.size) bytes that are not audio Tactus recognises")
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
    /// Where the song lies under a library root, for a song analysed in place.
    var location: SongLocation?
    /// Whether the library had the song before (a file analysed in place).
    var songWasKnown = false
}
