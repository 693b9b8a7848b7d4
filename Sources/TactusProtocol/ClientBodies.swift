import TactusDetector
import TactusModel

// The JSON bodies of client requests and of their `ok` replies. Field names are the CLI's
// `--json` names; optional fields are omitted when absent.

/// The state of a job.
public enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for an idle worker of its detector.
    case queued
    /// Sent to a worker (see `attempt`).
    case running
    /// Finished; its analysis is stored.
    case done
    /// Failed on its last attempt, or for a reason retrying cannot fix (a decode error).
    case failed
    /// Cancelled by a client before it finished.
    case cancelled
}

/// One job: one song analysed by one detector.
public struct JobInfo: WireBody {
    public var job: Int64
    public var song: SongID
    public var detector: String
    public var state: JobState
    /// Attempts started so far (0 while first queued).
    public var attempt: Int
    /// Why the job failed, when `state` is `failed` or `cancelled`.
    public var error: ErrorBody?

    public init(job: Int64, song: SongID, detector: String, state: JobState, attempt: Int = 0, error: ErrorBody? = nil) {
        self.job = job
        self.song = song
        self.detector = detector
        self.state = state
        self.attempt = attempt
        self.error = error
    }
}

/// `submit`: analyse a song with some or all detectors.
///
/// The song is either the request's single binary frame (its bytes) or `path`, a file on the
/// server (allowed only under the server's library roots). Exactly one of the two.
public struct SubmitRequest: WireBody {
    /// A server-side path instead of the bytes.
    public var path: String?
    /// A finished upload's id instead of the bytes (`upload`, SPEC section 3.9).
    public var upload: String?
    /// The file name, for people and for format hints (`song.mp3`).
    public var name: String?
    /// The detectors wanted; absent means every detector offered.
    public var detectors: [String]?
    /// Parameters per detector name; a detector without an entry uses its defaults.
    public var params: [String: ParameterSet]?
    /// Analyse again even when the store has a result for the same detector version and parameters.
    public var force: Bool?

    public init(
        path: String? = nil, name: String? = nil, detectors: [String]? = nil, params: [String: ParameterSet]? = nil,
        force: Bool? = nil, upload: String? = nil
    ) {
        self.path = path
        self.upload = upload
        self.name = name
        self.detectors = detectors
        self.params = params
        self.force = force
    }

    /// The longest song name accepted, in bytes of UTF-8: a file name's limit on common file systems.
    public static let maxNameBytes = 255

    public func validate(command: String) throws(ProtocolError) {
        if let path { try Check.text(path, field: "path", max: 4096, command: command) }
        if let upload {
            try UploadRequest.checkID(upload, command: command)
            guard path == nil else { throw .invalidBody(command: command, field: "upload", detail: "give a path or an upload, not both") }
        }
        if let name { try Check.text(name, field: "name", max: Self.maxNameBytes, command: command) }
        for (index, detector) in (detectors ?? []).enumerated() {
            try Check.detector(detector, field: "detectors[\(index)]", command: command)
        }
        for (detector, set) in params ?? [:] {
            try Check.detector(detector, field: "params", command: command)
            try Check.parameters(set, field: "params.\(detector)", command: command)
        }
    }
}

/// The answer to `submit`: the song id (the SHA-256 of its bytes) and one job per detector.
/// A job answered from the store is already `done`.
public struct SubmitResponse: WireBody {
    public var song: SongID
    public var jobs: [JobInfo]

    public init(song: SongID, jobs: [JobInfo]) {
        self.song = song
        self.jobs = jobs
    }
}

/// `status`: of one job (`job`), of one song's jobs (`song`), or of the server (neither).
public struct StatusRequest: WireBody {
    public var job: Int64?
    /// The song: its id or a unique prefix of at least 8 hex digits.
    public var song: String?

    public init(job: Int64? = nil, song: String? = nil) {
        self.job = job
        self.song = song
    }

    /// The jobs of the song `song`, named by its id.
    public init(song: SongID) {
        self.init(song: song.hex)
    }

    public func validate(command: String) throws(ProtocolError) {
        if let job { try Check.positive(job, field: "job", command: command) }
        if let song { try Check.song(song, command: command) }
        if job != nil && song != nil {
            throw .invalidBody(command: command, field: "job", detail: "give job or song, not both")
        }
    }
}

/// A connected worker, as `status` reports it.
public struct WorkerInfo: WireBody {
    public var workerId: String
    /// The (first) detector it offers, and its version.
    public var detector: String
    public var version: String
    /// The job it is running (the first, when it runs several jobs of one song); absent when idle.
    public var job: Int64?
    /// Every detector it offers, when it offers more than one.
    public var detectors: [String]?
    /// Every job it is running, when it runs more than one.
    public var jobs: [Int64]?

    public init(
        workerId: String, detector: String, version: String, job: Int64? = nil, detectors: [String]? = nil, jobs: [Int64]? = nil
    ) {
        self.workerId = workerId
        self.detector = detector
        self.version = version
        self.job = job
        self.detectors = detectors
        self.jobs = jobs
    }

    enum CodingKeys: String, CodingKey {
        case workerId = "worker_id", detector, version, job, detectors, jobs
    }
}

/// The server's state, in answer to a `status` without `job` or `song`.
public struct ServerStatus: WireBody {
    /// Queued jobs per detector name.
    public var queue: [String: Int]
    public var workers: [WorkerInfo]
    /// Jobs finished per second over the last minute.
    public var jobsPerSecond: Double
    public var uptimeS: Double
    /// False once the server is shutting down.
    public var accepting: Bool

    public init(queue: [String: Int], workers: [WorkerInfo], jobsPerSecond: Double, uptimeS: Double, accepting: Bool) {
        self.queue = queue
        self.workers = workers
        self.jobsPerSecond = jobsPerSecond
        self.uptimeS = uptimeS
        self.accepting = accepting
    }

    enum CodingKeys: String, CodingKey {
        case queue, workers, accepting
        case jobsPerSecond = "jobs_per_second", uptimeS = "uptime_s"
    }
}

/// The answer to `status`: the jobs asked about (one for `job`, all of a song's for `song`,
/// none for the server) and, for the server, its state.
public struct StatusResponse: WireBody {
    public var jobs: [JobInfo]
    public var server: ServerStatus?

    public init(jobs: [JobInfo], server: ServerStatus? = nil) {
        self.jobs = jobs
        self.server = server
    }
}

/// `result`: a song's stored analyses.
public struct ResultRequest: WireBody {
    /// The song: its id or a unique prefix of at least 8 hex digits.
    public var song: String
    /// Only these detectors; absent means all.
    public var detectors: [String]?
    /// Include each analysis's windows (otherwise `windows` is empty).
    public var windows: Bool?
    /// Include the song's energy envelope as a float32 frame.
    public var envelope: Bool?

    public init(song: String, detectors: [String]? = nil, windows: Bool? = nil, envelope: Bool? = nil) {
        self.song = song
        self.detectors = detectors
        self.windows = windows
        self.envelope = envelope
    }

    /// The analyses of the song `song`, named by its id.
    public init(song: SongID, detectors: [String]? = nil, windows: Bool? = nil, envelope: Bool? = nil) {
        self.init(song: song.hex, detectors: detectors, windows: windows, envelope: envelope)
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.song(song, command: command)
        for (index, detector) in (detectors ?? []).enumerated() {
            try Check.detector(detector, field: "detectors[\(index)]", command: command)
        }
    }
}

/// The answer to `result`. With `envelope_hop_s`, the reply has one float32 frame: the
/// song's energy envelope (see ``TactusDetector/EnergyEnvelope``).
public struct ResultResponse: WireBody {
    public var song: SongID
    public var name: String?
    public var durationS: Double?
    public var analyses: [TempoAnalysis]
    /// Detectors whose jobs have not finished yet.
    public var pending: [String]
    public var consensus: ConsensusTempo
    /// The envelope's hop, present exactly when the envelope frame follows.
    public var envelopeHopS: Double?
    /// Where the song's files lie under the server's library roots (present and missing
    /// ones), the first ``TempoMatch/maxListedPaths`` by root and path; absent or empty for a
    /// song that was uploaded.
    public var locations: [SongLocation]?
    /// How many locations the song has, when ``locations`` does not list them all.
    public var locationCount: Int?
    /// The song's constant beat grid, when it has one that agrees with its consensus.
    public var beatGrid: BeatGrid?

    /// The absolute paths of the song's files that were present at the last scan.
    public var paths: [String] { (locations ?? []).filter { !$0.missing }.map(\.absolutePath) }

    public init(
        song: SongID, name: String? = nil, durationS: Double? = nil, analyses: [TempoAnalysis], pending: [String] = [],
        consensus: ConsensusTempo, envelopeHopS: Double? = nil, locations: [SongLocation]? = nil, beatGrid: BeatGrid? = nil
    ) {
        self.song = song
        self.name = name
        self.durationS = durationS
        self.analyses = analyses
        self.pending = pending
        self.consensus = consensus
        self.envelopeHopS = envelopeHopS
        // Anyone who may write to a library folder could link the song at thousands of long
        // paths: the answer would be larger than a reply may be.
        if let locations, locations.count > TempoMatch.maxListedPaths {
            self.locations = Array(locations.prefix(TempoMatch.maxListedPaths))
            locationCount = locations.count
        } else {
            self.locations = locations
        }
        self.beatGrid = beatGrid
    }

    enum CodingKeys: String, CodingKey {
        case song, name, analyses, pending, consensus, locations
        case durationS = "duration_s", envelopeHopS = "envelope_hop_s", beatGrid = "beat_grid", locationCount = "location_count"
    }
}

/// A detector offered by connected workers, in answer to `detectors`.
public struct OfferedDetector: WireBody {
    public var detector: DetectorInfo
    /// Connected workers offering it.
    public var workers: Int
    /// Jobs waiting for it.
    public var queued: Int

    public init(detector: DetectorInfo, workers: Int, queued: Int) {
        self.detector = detector
        self.workers = workers
        self.queued = queued
    }
}

/// The answer to `detectors`.
public struct DetectorsResponse: WireBody {
    public var detectors: [OfferedDetector]

    public init(detectors: [OfferedDetector]) {
        self.detectors = detectors
    }
}

/// `cancel`: one job, or every unfinished job of a song.
public struct CancelRequest: WireBody {
    public var job: Int64?
    /// The song: its id or a unique prefix of at least 8 hex digits.
    public var song: String?

    public init(job: Int64? = nil, song: String? = nil) {
        self.job = job
        self.song = song
    }

    /// Every unfinished job of the song `song`, named by its id.
    public init(song: SongID) {
        self.init(song: song.hex)
    }

    public func validate(command: String) throws(ProtocolError) {
        if let job { try Check.positive(job, field: "job", command: command) }
        if let song { try Check.song(song, command: command) }
        guard (job == nil) != (song == nil) else {
            throw .invalidBody(command: command, field: "job", detail: "give exactly one of job and song")
        }
    }
}

/// The answer to `cancel`: the jobs that were cancelled (finished ones are left alone).
public struct CancelResponse: WireBody {
    public var cancelled: [Int64]

    public init(cancelled: [Int64]) {
        self.cancelled = cancelled
    }
}
