import TactusDetector

// The JSON bodies of the worker protocol (the coordinator's backend).

/// READY: a worker announces itself and the detector it runs. Sent once after connecting
/// (and again after every reconnection); nothing else may precede it.
public struct ReadyBody: WireBody {
    /// The worker's own name, unique per process (`host-pid-random`), for logs and `status`.
    public var workerId: String
    public var detector: DetectorInfo
    /// The parameters the worker was started with, resolved; informational: every JOB carries
    /// the complete set to use.
    public var params: ParameterSet
    /// The library roots (absolute directories, as the worker resolved them) under which this
    /// worker can open files itself, sharing the coordinator's host and file system: a JOB for a
    /// song that lies under one of them names its location instead of carrying its bytes.
    /// Absent or empty: every JOB carries the bytes.
    public var roots: [String]?

    public init(workerId: String, detector: DetectorInfo, params: ParameterSet, roots: [String]? = nil) {
        self.workerId = workerId
        self.detector = detector
        self.params = params
        self.roots = roots
    }

    enum CodingKeys: String, CodingKey {
        case workerId = "worker_id", detector, params, roots
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.text(workerId, field: "worker_id", max: 128, command: command)
        try detector.validate(command: command)
        try Check.parameters(params, field: "params", command: command)
        guard (roots ?? []).count <= 64 else {
            throw .invalidBody(command: command, field: "roots", detail: "at most 64 library roots")
        }
        for (index, root) in (roots ?? []).enumerated() {
            try Check.text(root, field: "roots[\(index)]", max: 4096, command: command)
            guard root.hasPrefix("/") else {
                throw .invalidBody(command: command, field: "roots[\(index)]", detail: "an absolute directory")
            }
        }
    }
}

/// Where the song of a JOB lies, for a worker that declared its root in READY: the worker opens
/// `path` below `root` itself (refusing symbolic links, as the coordinator does) and checks
/// that the bytes' SHA-256 is the JOB's `song` before analysing them.
public struct JobLocation: WireBody {
    /// One of the roots the worker declared.
    public var root: String
    /// The file's path below the root: `/`-separated names, never `.` or `..`.
    public var path: String

    public init(root: String, path: String) {
        self.root = root
        self.path = path
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.text(root, field: "location.root", max: 4096, command: command)
        try Check.text(path, field: "location.path", max: 4096, command: command)
        let names = path.split(separator: "/", omittingEmptySubsequences: false)
        guard root.hasPrefix("/"), !path.isEmpty, names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw .invalidBody(command: command, field: "location", detail: "an absolute root and a relative path without `.` or `..`")
        }
    }
}

/// JOB: the coordinator gives an idle worker one song to analyse. The song's bytes follow in
/// one binary frame, which is empty when `location` names the file instead.
public struct JobBody: WireBody {
    public var job: Int64
    /// 1 for the first attempt; a RESULT must echo it.
    public var attempt: Int
    public var song: String
    /// The file name the song was submitted with, when known, for the worker's messages (the
    /// format is recognised from the bytes).
    public var name: String?
    /// The complete, resolved parameters to run with.
    public var params: ParameterSet
    /// After this many seconds the coordinator treats the job as lost.
    public var timeLimitS: Double
    /// Send the song's energy envelope with the result.
    public var envelope: Bool
    /// Where the worker opens the song itself (under a root it declared in READY); the audio
    /// frame is then empty.
    public var location: JobLocation?

    public init(
        job: Int64, attempt: Int, song: String, name: String? = nil, params: ParameterSet, timeLimitS: Double,
        envelope: Bool, location: JobLocation? = nil
    ) {
        self.job = job
        self.attempt = attempt
        self.song = song
        self.name = name
        self.params = params
        self.timeLimitS = timeLimitS
        self.envelope = envelope
        self.location = location
    }

    enum CodingKeys: String, CodingKey {
        case job, attempt, song, name, params, envelope, location
        case timeLimitS = "time_limit_s"
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.positive(job, field: "job", command: command)
        try Check.positive(Int64(attempt), field: "attempt", command: command)
        try Check.song(song, command: command)
        try Check.parameters(params, field: "params", command: command)
        try Check.finite(timeLimitS, field: "time_limit_s", in: 0.001...1_000_000, command: command)
        try location?.validate(command: command)
    }
}

/// What the worker learnt about the song's audio while decoding it.
public struct AudioFacts: WireBody {
    /// The container or codec found by content (`wav`, `flac`, `ogg`, `mp3`).
    public var format: String
    public var durationS: Double
    public var sampleRate: Double
    public var channels: Int

    public init(format: String, durationS: Double, sampleRate: Double, channels: Int) {
        self.format = format
        self.durationS = durationS
        self.sampleRate = sampleRate
        self.channels = channels
    }

    enum CodingKeys: String, CodingKey {
        case format, channels
        case durationS = "duration_s", sampleRate = "sample_rate"
    }
}

/// RESULT: the outcome of one attempt of one job. Either `analysis` (with `audio`, and
/// `envelope_hop_s` when the envelope frame follows) or `error`, never both.
public struct ResultBody: WireBody {
    public var job: Int64
    /// The attempt of the JOB this answers; a RESULT of an older attempt is discarded.
    public var attempt: Int
    public var analysis: TempoAnalysis?
    public var audio: AudioFacts?
    /// The envelope's hop in seconds, present exactly when a float32 envelope frame follows.
    public var envelopeHopS: Double?
    /// Why the job failed (a decode error code such as `corrupt`, or `internal`).
    public var error: ErrorBody?

    /// A successful result.
    public init(job: Int64, attempt: Int, analysis: TempoAnalysis, audio: AudioFacts?, envelopeHopS: Double? = nil) {
        self.job = job
        self.attempt = attempt
        self.analysis = analysis
        self.audio = audio
        self.envelopeHopS = envelopeHopS
    }

    /// A failure.
    public init(job: Int64, attempt: Int, error: ErrorBody) {
        self.job = job
        self.attempt = attempt
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case job, attempt, analysis, audio, error
        case envelopeHopS = "envelope_hop_s"
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.positive(job, field: "job", command: command)
        try Check.positive(Int64(attempt), field: "attempt", command: command)
        guard (analysis == nil) != (error == nil) else {
            throw .invalidBody(command: command, field: "analysis", detail: "a result has exactly one of analysis and error")
        }
        if error != nil && (envelopeHopS != nil || audio != nil) {
            throw .invalidBody(command: command, field: "error", detail: "a failure carries no audio facts or envelope")
        }
        if let envelopeHopS { try Check.finite(envelopeHopS, field: "envelope_hop_s", in: 1e-6...60, command: command) }
        try error?.validate(command: command)
    }
}

/// DISCONNECT: the sender is going away (`error` absent), or refuses the peer (`error` says
/// why, for example `unsupported-version` or `bad-request`).
public struct DisconnectBody: WireBody {
    public var reason: String?
    public var error: ErrorBody?

    public init(reason: String? = nil, error: ErrorBody? = nil) {
        self.reason = reason
        self.error = error
    }
}
