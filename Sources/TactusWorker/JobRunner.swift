import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusLibraryRoots
import TactusProtocol

/// Runs one job: makes the worker's detector with the job's parameters, decodes the song's
/// bytes and analyses them, and says how it went as a RESULT.
///
/// Nothing a job carries can make it trap or throw: parameters the detector does not accept
/// are an `invalid-parameter` failure, bytes that do not decode are a failure with the audio
/// error's code (`empty`, `unsupported-format`, `corrupt`, `truncated`, `too-short`,
/// `too-long`), and an analysis that runs past ``timeLimit`` stops and fails `timeout`, so a
/// bad file costs one failed job, never the worker.
///
/// ```swift
/// let runner = JobRunner(detector: CombFilterDetector.self)
/// let outcome = runner.run(job, audio: bytes)
/// try socket.send(try outcome.message.frames())
/// ```
public struct JobRunner: Sendable {
    /// The detector every job runs; each job makes one with its own parameters.
    public let detector: any TempoDetector.Type
    /// The limits of decoding (shortest and longest song accepted).
    public let decoding: DecodingOptions
    /// How long one job's analysis may take, or nil for no limit (``SongAnalyzer/timeLimit``).
    public let timeLimit: Duration?
    /// The library roots under which a JOB's `location` is opened.
    public let libraryRoots: LibraryRoots

    public init(
        detector: any TempoDetector.Type, decoding: DecodingOptions = .standard, timeLimit: Duration? = nil,
        libraryRoots: LibraryRoots = LibraryRoots([])
    ) {
        self.detector = detector
        self.decoding = decoding
        self.timeLimit = timeLimit
        self.libraryRoots = libraryRoots
    }

    /// Analyses `audio`, the song's bytes, or the file the job's `location` names, as `job` asks.
    public func run(_ job: JobBody, audio: [UInt8]) -> JobOutcome {
        let instance: any TempoDetector
        do throws(ParameterError) {
            instance = try detector.init(parameters: detector.descriptor.resolve(job.params))
        } catch {
            return JobOutcome(job: job, error: ErrorBody(code: .invalidParameter, message: error.description))
        }
        let name = job.name ?? "song \(job.song.prefix(16))"
        let analyzer = SongAnalyzer(detectors: [instance], decoding: decoding, timeLimit: timeLimit)
        let analysis: SongAnalysis
        if let location = job.location {
            let file: LibraryFile
            do throws(ErrorBody) {
                file = try libraryRoots.open(root: location.root, relative: location.path, named: "\(location.root)/\(location.path)")
                guard try file.songID().hex == job.song else {
                    throw ErrorBody(
                        code: .songChanged,
                        message: "\(file.path): the file's bytes are no longer those of song \(job.song.prefix(16)) (scan again)")
                }
            } catch {
                return JobOutcome(job: job, error: error)
            }
            analysis = analyzer.analyze(.descriptor(file.descriptor, name: name))
        } else {
            analysis = analyzer.analyze(.bytes(audio, name: name))
        }
        if let problem = analysis.error {
            return JobOutcome(job: job, error: ErrorBody(code: ErrorCode(rawValue: problem.code), message: problem.message))
        }
        guard let result = analysis.analyses.first, let metadata = analysis.metadata else {
            return JobOutcome(job: job, error: ErrorBody(code: .internal, message: "\(name): the analysis produced no result"))
        }
        let facts = AudioFacts(
            format: metadata.format.rawValue, durationS: metadata.duration, sampleRate: Double(metadata.sampleRate),
            channels: metadata.channels)
        let envelope = job.envelope ? analysis.envelope : nil
        return JobOutcome(
            result: ResultBody(
                job: job.job, attempt: job.attempt, analysis: result, audio: facts, envelopeHopS: envelope?.hopS),
            envelope: envelope?.values, warnings: analysis.warnings)
    }
}

/// What a job came to: the RESULT to send, and warnings about a song that was analysed all
/// the same (a truncated file), for the logs.
public struct JobOutcome: Sendable, Hashable {
    /// The RESULT body: an analysis with audio facts, or an error.
    public var result: ResultBody
    /// The song's energy envelope, when the job asked for it and the analysis succeeded.
    public var envelope: [Float]?
    public var warnings: [AnalysisProblem]

    public init(result: ResultBody, envelope: [Float]? = nil, warnings: [AnalysisProblem] = []) {
        self.result = result
        self.envelope = envelope
        self.warnings = warnings
    }

    /// A failure of `job`.
    public init(job: JobBody, error: ErrorBody) {
        self.init(result: ResultBody(job: job.job, attempt: job.attempt, error: error))
    }

    /// The RESULT message.
    public var message: WorkerMessage { .result(result, envelope: envelope) }
}
