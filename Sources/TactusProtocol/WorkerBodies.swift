import TactusDetector
import TactusModel

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
        try Check.roots(roots, command: command)
    }
}

extension Check {
    /// The library roots a worker declares (READY's `roots`): at most 64 absolute directories.
    static func roots(_ roots: [String]?, command: String) throws(ProtocolError) {
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
    public var song: SongID
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
        job: Int64, attempt: Int, song: SongID, name: String? = nil, params: ParameterSet, timeLimitS: Double,
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

    /// The longest duration a worker may report, in seconds (about 11.6 days): far beyond any
    /// song a server takes (`--max-duration-s`), and small enough that the beats, clocks and
    /// render sizes computed from a stored duration stay within their integers.
    public static let maximumDurationS = 1_000_000.0

    /// Refuses facts no decoder reports: a duration that is not finite or not in
    /// 0...``maximumDurationS``, a sample rate that is not a positive finite number, no channels.
    public func validate(command: String) throws(ProtocolError) {
        try Check.finite(durationS, field: "audio.duration_s", in: 0...Self.maximumDurationS, command: command)
        try Check.finite(sampleRate, field: "audio.sample_rate", in: 1...Double(Int32.max), command: command)
        guard channels >= 1 else { throw .invalidBody(command: command, field: "audio.channels", detail: "must be at least 1") }
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
        try audio?.validate(command: command)
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

// MARK: Version 2: several detectors per worker, all of a song's jobs in one JOB

/// One detector a worker offers (an entry of a version-2 READY).
public struct DetectorOffer: WireBody {
    public var detector: DetectorInfo
    /// The parameters the worker was started with for this detector, resolved; informational.
    public var params: ParameterSet

    public init(detector: DetectorInfo, params: ParameterSet) {
        self.detector = detector
        self.params = params
    }

    public func validate(command: String) throws(ProtocolError) {
        try detector.validate(command: command)
        try Check.parameters(params, field: "params", command: command)
    }
}

/// READY in version 2: a worker announces itself and every detector it offers. Sent once
/// after connecting (and again after every reconnection); nothing else may precede it.
public struct OfferBody: WireBody {
    /// The most detectors one worker may offer.
    public static let maximumDetectors = 16

    public var workerId: String
    /// The detectors, each named once.
    public var detectors: [DetectorOffer]
    /// The library roots the worker can open files under itself, as in version 1's READY.
    public var roots: [String]?
    /// The worker answers IDENTIFY for files below its roots.
    public var identifies: Bool?

    public init(workerId: String, detectors: [DetectorOffer], roots: [String]? = nil, identifies: Bool? = nil) {
        self.workerId = workerId
        self.detectors = detectors
        self.roots = roots
        self.identifies = identifies
    }

    enum CodingKeys: String, CodingKey {
        case workerId = "worker_id", detectors, roots, identifies
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.text(workerId, field: "worker_id", max: 128, command: command)
        guard (1...Self.maximumDetectors).contains(detectors.count) else {
            throw .invalidBody(
                command: command, field: "detectors", detail: "a worker offers 1 to \(Self.maximumDetectors) detectors")
        }
        for offer in detectors { try offer.validate(command: command) }
        guard Set(detectors.map(\.detector.name)).count == detectors.count else {
            throw .invalidBody(command: command, field: "detectors", detail: "a detector is offered twice")
        }
        try Check.roots(roots, command: command)
    }
}

/// One job of a version-2 JOB: which detector to run with which parameters.
public struct SongJobEntry: WireBody {
    public var job: Int64
    /// 1 for the first attempt; the job's answer in RESULT echoes it.
    public var attempt: Int
    public var detector: String
    /// The complete, resolved parameters to run with.
    public var params: ParameterSet

    public init(job: Int64, attempt: Int, detector: String, params: ParameterSet) {
        self.job = job
        self.attempt = attempt
        self.detector = detector
        self.params = params
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.positive(job, field: "job", command: command)
        try Check.positive(Int64(attempt), field: "attempt", command: command)
        try Check.detector(detector, command: command)
        try Check.parameters(params, field: "params", command: command)
    }
}

/// JOB in version 2: every pending job of one song for the detectors the worker offers. The
/// song's bytes follow in one binary frame; the worker decodes them once for all the jobs.
public struct SongJobBody: WireBody {
    /// The most jobs one JOB may carry.
    public static let maximumJobs = 32

    public var song: SongID
    /// The file name the song was submitted with, when known, for the worker's messages.
    public var name: String?
    /// After this many seconds the coordinator treats every job of the message as lost.
    public var timeLimitS: Double
    /// Send the song's energy envelope with the result.
    public var envelope: Bool
    public var jobs: [SongJobEntry]
    /// Where the song lies below a root the worker declared, when the worker opens it itself
    /// (the audio frame is then empty), as in version 1's JOB.
    public var location: JobLocation?

    public init(
        song: SongID, name: String? = nil, timeLimitS: Double, envelope: Bool, jobs: [SongJobEntry], location: JobLocation? = nil
    ) {
        self.song = song
        self.name = name
        self.timeLimitS = timeLimitS
        self.envelope = envelope
        self.jobs = jobs
        self.location = location
    }

    enum CodingKeys: String, CodingKey {
        case song, name, envelope, jobs, location
        case timeLimitS = "time_limit_s"
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.finite(timeLimitS, field: "time_limit_s", in: 0.001...1_000_000, command: command)
        guard (1...Self.maximumJobs).contains(jobs.count) else {
            throw .invalidBody(command: command, field: "jobs", detail: "a JOB carries 1 to \(Self.maximumJobs) jobs")
        }
        for job in jobs { try job.validate(command: command) }
        guard Set(jobs.map(\.job)).count == jobs.count else {
            throw .invalidBody(command: command, field: "jobs", detail: "a job appears twice")
        }
        try location?.validate(command: command)
    }
}

/// The answer to one job of a version-2 JOB: `analysis` or `error`, never both.
public struct SongJobAnswer: WireBody {
    public var job: Int64
    public var attempt: Int
    public var analysis: TempoAnalysis?
    /// Why this job failed (a decode error code such as `corrupt`, `invalid-parameter`, `internal`).
    public var error: ErrorBody?

    /// A success.
    public init(job: Int64, attempt: Int, analysis: TempoAnalysis) {
        self.job = job
        self.attempt = attempt
        self.analysis = analysis
    }

    /// A failure.
    public init(job: Int64, attempt: Int, error: ErrorBody) {
        self.job = job
        self.attempt = attempt
        self.error = error
    }

    /// This answer with the texts its worker wrote (an error's message, an analysis' reason) cut
    /// to ``ErrorBody/maxPeerMessageCharacters``.
    public func bounded() -> SongJobAnswer {
        var bounded = self
        bounded.error = error?.bounded()
        if let reason = analysis?.reason {
            bounded.analysis?.reason = BoundedText.cut(reason, toScalars: ErrorBody.maxPeerMessageCharacters)
        }
        return bounded
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.positive(job, field: "job", command: command)
        try Check.positive(Int64(attempt), field: "attempt", command: command)
        guard (analysis == nil) != (error == nil) else {
            throw .invalidBody(command: command, field: "results", detail: "an answer has exactly one of analysis and error")
        }
        try error?.validate(command: command)
    }
}

/// RESULT in version 2: the answers to every job of one JOB, with what the worker learnt
/// about the song (`audio`, and `envelope_hop_s` when the envelope frame follows) when at
/// least one job succeeded.
public struct SongResultBody: WireBody {
    public var song: SongID
    public var audio: AudioFacts?
    /// The envelope's hop in seconds, present exactly when a float32 envelope frame follows.
    public var envelopeHopS: Double?
    /// One answer per job of the JOB.
    public var results: [SongJobAnswer]
    /// The song's constant beat grid at the consensus tempo of the analyses answered, when the
    /// worker fitted one (optional: workers that fit none leave it out).
    public var beatGrid: BeatGrid?

    public init(
        song: SongID, audio: AudioFacts? = nil, envelopeHopS: Double? = nil, results: [SongJobAnswer], beatGrid: BeatGrid? = nil
    ) {
        self.song = song
        self.audio = audio
        self.envelopeHopS = envelopeHopS
        self.results = results
        self.beatGrid = beatGrid
    }

    enum CodingKeys: String, CodingKey {
        case song, audio, results
        case envelopeHopS = "envelope_hop_s", beatGrid = "beat_grid"
    }

    public func validate(command: String) throws(ProtocolError) {
        guard (1...SongJobBody.maximumJobs).contains(results.count) else {
            throw .invalidBody(command: command, field: "results", detail: "a RESULT answers 1 to \(SongJobBody.maximumJobs) jobs")
        }
        for answer in results { try answer.validate(command: command) }
        guard Set(results.map(\.job)).count == results.count else {
            throw .invalidBody(command: command, field: "results", detail: "a job is answered twice")
        }
        if results.allSatisfy({ $0.analysis == nil }) && (envelopeHopS != nil || audio != nil) {
            throw .invalidBody(command: command, field: "results", detail: "a result without any analysis carries no audio facts or envelope")
        }
        if let envelopeHopS { try Check.finite(envelopeHopS, field: "envelope_hop_s", in: 1e-6...60, command: command) }
        try audio?.validate(command: command)
        if let beatGrid {
            guard results.contains(where: { $0.analysis != nil }) else {
                throw .invalidBody(command: command, field: "beat_grid", detail: "a result without any analysis carries no beat grid")
            }
            if let problem = beatGrid.problem { throw .invalidBody(command: command, field: "beat_grid", detail: problem) }
        }
    }
}
