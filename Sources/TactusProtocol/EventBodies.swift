import TactusDetector
import TactusModel

// The JSON bodies of events (the coordinator's PUB socket).

/// `job.done`: a job finished and its analysis is stored.
public struct JobDoneEvent: WireBody {
    public var job: Int64
    public var song: SongID
    public var detector: String
    public var bpm: Double?
    public var confidence: Double

    public init(job: Int64, song: SongID, detector: String, bpm: Double?, confidence: Double) {
        self.job = job
        self.song = song
        self.detector = detector
        self.bpm = bpm
        self.confidence = confidence
    }

    // bpm is written as null when absent, as in the analysis itself.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(job, forKey: .job)
        try container.encode(song, forKey: .song)
        try container.encode(detector, forKey: .detector)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(confidence, forKey: .confidence)
    }
}

/// `job.failed`: a job failed for good (after its last attempt, or at once for a decode error).
public struct JobFailedEvent: WireBody {
    public var job: Int64
    public var song: SongID
    public var detector: String
    public var attempts: Int
    public var error: ErrorBody

    public init(job: Int64, song: SongID, detector: String, attempts: Int, error: ErrorBody) {
        self.job = job
        self.song = song
        self.detector = detector
        self.attempts = attempts
        self.error = error
    }
}

/// `song.done`: every job of the song has finished (done, failed or cancelled).
public struct SongDoneEvent: WireBody {
    public var song: SongID
    public var jobs: [JobInfo]
    public var consensus: ConsensusTempo

    public init(song: SongID, jobs: [JobInfo], consensus: ConsensusTempo) {
        self.song = song
        self.jobs = jobs
        self.consensus = consensus
    }
}

/// `worker.joined` and `worker.lost`.
public struct WorkerEvent: WireBody {
    public var workerId: String
    public var detector: String
    public var version: String
    /// With `worker.lost`: why (`disconnected`, `silent`, `timeout`).
    public var reason: String?

    public init(workerId: String, detector: String, version: String, reason: String? = nil) {
        self.workerId = workerId
        self.detector = detector
        self.version = version
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case workerId = "worker_id", detector, version, reason
    }
}
