import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusLibraryRoots
import TactusModel
import TactusProtocol

/// Runs jobs: makes each job's detector with the job's parameters, decodes the song's bytes
/// once and analyses them with every detector of the song's jobs together, and says how it
/// went as a RESULT.
///
/// Nothing a job carries can make it trap or throw: parameters the detector does not accept
/// are an `invalid-parameter` failure of that job (the others run), a detector the worker
/// does not offer is `unknown-detector`, bytes that do not decode fail every job with the
/// audio error's code (`empty`, `unsupported-format`, `corrupt`, `truncated`, `too-short`,
/// `too-long`), and an analysis that runs past ``timeLimit`` stops and fails `timeout`, so a
/// bad file costs failed jobs, never the worker.
///
/// ```swift
/// let runner = JobRunner(detectors: [CombFilterDetector.self, AutocorrelationDetector.self])
/// let outcome = runner.run(songJob, audio: bytes)
/// try socket.send(try outcome.message.frames())
/// ```
public struct JobRunner: Sendable {
    /// The detectors jobs may ask for; each job makes one with its own parameters.
    public let detectors: [any TempoDetector.Type]
    /// The limits of decoding (shortest and longest song accepted).
    public let decoding: DecodingOptions
    /// How long one song's analysis may take, or nil for no limit (``SongAnalyzer/timeLimit``).
    public let timeLimit: Duration?
    /// The library roots under which a JOB's `location` is opened.
    public let libraryRoots: LibraryRoots

    public init(
        detectors: [any TempoDetector.Type], decoding: DecodingOptions = .standard, timeLimit: Duration? = nil,
        libraryRoots: LibraryRoots = LibraryRoots([])
    ) {
        self.detectors = detectors
        self.decoding = decoding
        self.timeLimit = timeLimit
        self.libraryRoots = libraryRoots
    }

    /// A runner of one detector.
    public init(
        detector: any TempoDetector.Type, decoding: DecodingOptions = .standard, timeLimit: Duration? = nil,
        libraryRoots: LibraryRoots = LibraryRoots([])
    ) {
        self.init(detectors: [detector], decoding: decoding, timeLimit: timeLimit, libraryRoots: libraryRoots)
    }

    /// Analyses `audio`, the song's bytes, or the file the job's `location` names, as the
    /// version-1 `job` asks.
    public func run(_ job: JobBody, audio: [UInt8]) -> JobOutcome {
        let detector = detectors[0].descriptor.name
        let song = SongJobBody(
            song: job.song, name: job.name, timeLimitS: job.timeLimitS, envelope: job.envelope,
            jobs: [SongJobEntry(job: job.job, attempt: job.attempt, detector: detector, params: job.params)], location: job.location)
        let outcome = run(song, audio: audio)
        let answer = outcome.result.results[0]
        guard let analysis = answer.analysis else {
            return JobOutcome(job: job, error: answer.error ?? ErrorBody(code: .internal, message: "no result"))
        }
        return JobOutcome(
            result: ResultBody(
                job: job.job, attempt: job.attempt, analysis: analysis, audio: outcome.result.audio,
                envelopeHopS: outcome.result.envelopeHopS),
            envelope: outcome.envelope, warnings: outcome.warnings)
    }

    /// Analyses `audio`, the song's bytes, for every job of `song`: one decode, every
    /// detector fed the same blocks.
    public func run(_ song: SongJobBody, audio: [UInt8]) -> SongJobOutcome {
        var answers: [Int64: SongJobAnswer] = [:]
        var runnable: [(entry: SongJobEntry, detector: any TempoDetector)] = []
        for entry in song.jobs {
            guard let type = detectors.first(where: { $0.descriptor.name == entry.detector }) else {
                answers[entry.job] = SongJobAnswer(
                    job: entry.job, attempt: entry.attempt,
                    error: ErrorBody(code: .unknownDetector, message: "this worker does not offer \(entry.detector)"))
                continue
            }
            do throws(ParameterError) {
                runnable.append((entry, try type.init(parameters: type.descriptor.resolve(entry.params))))
            } catch {
                answers[entry.job] = SongJobAnswer(
                    job: entry.job, attempt: entry.attempt, error: ErrorBody(code: .invalidParameter, message: error.description))
            }
        }
        var facts: AudioFacts?
        var envelope: EnergyEnvelope?
        var beatGrid: BeatGrid?
        var warnings: [AnalysisProblem] = []
        if !runnable.isEmpty {
            let name = song.name ?? "song \(song.song.hex.prefix(16))"
            let failAll = { (error: ErrorBody) in
                for (entry, _) in runnable { answers[entry.job] = SongJobAnswer(job: entry.job, attempt: entry.attempt, error: error) }
            }
            // A song below a shared library root is read from its file, kept open while it is analysed.
            var file: LibraryFile?
            var readable = true
            if let location = song.location {
                do throws(ErrorBody) {
                    file = try open(location, song: song.song)
                } catch {
                    failAll(error)
                    readable = false
                }
            }
            if readable {
                let source: AudioSource = file.map { .descriptor($0.descriptor, name: name) } ?? .bytes(audio, name: name)
                let analysis = SongAnalyzer(detectors: runnable.map(\.detector), decoding: decoding, timeLimit: timeLimit)
                    .analyze(source, song: song.song)
                withExtendedLifetime(file) {}
                warnings = analysis.warnings
                if let problem = analysis.error {
                    failAll(ErrorBody(problem))
                } else if let metadata = analysis.metadata, analysis.analyses.count == runnable.count {
                    facts = AudioFacts(
                        format: metadata.format.rawValue, durationS: metadata.duration, sampleRate: Double(metadata.sampleRate),
                        channels: metadata.channels)
                    envelope = song.envelope ? analysis.envelope : nil
                    beatGrid = analysis.beatGrid
                    for ((entry, _), result) in zip(runnable, analysis.analyses) {
                        answers[entry.job] = SongJobAnswer(job: entry.job, attempt: entry.attempt, analysis: result)
                    }
                } else {
                    failAll(ErrorBody(code: .internal, message: "\(name): the analysis produced no result"))
                }
            }
        }
        return SongJobOutcome(
            result: SongResultBody(
                song: song.song, audio: facts, envelopeHopS: envelope?.hopS, results: song.jobs.compactMap { answers[$0.job] },
                beatGrid: beatGrid),
            envelope: envelope?.values, warnings: warnings)
    }

    /// The file a JOB's `location` names, opened below this worker's library roots (refusing
    /// symbolic links, as the coordinator does) and checked to still hold the song's bytes.
    private func open(_ location: JobLocation, song: SongID) throws(ErrorBody) -> LibraryFile {
        let file: LibraryFile
        let found: SongID
        do throws(LibraryRootsError) {
            file = try libraryRoots.open(root: location.root, relative: location.path, named: "\(location.root)/\(location.path)")
            found = try file.songID()
        } catch {
            throw ErrorBody(error)
        }
        guard found == song else {
            throw ErrorBody(
                code: .songChanged, message: "\(file.path): the file's bytes are no longer those of song \(song.hex.prefix(16)) (scan again)")
        }
        return file
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

/// What the jobs of a version-2 JOB came to: the RESULT with one answer per job, and
/// warnings about the song for the logs.
public struct SongJobOutcome: Sendable, Hashable {
    public var result: SongResultBody
    /// The song's energy envelope, when the JOB asked for it and an analysis succeeded.
    public var envelope: [Float]?
    public var warnings: [AnalysisProblem]

    public init(result: SongResultBody, envelope: [Float]? = nil, warnings: [AnalysisProblem] = []) {
        self.result = result
        self.envelope = envelope
        self.warnings = warnings
    }

    /// Every job of `song` failed with `error`.
    public init(song: SongJobBody, error: ErrorBody) {
        self.init(
            result: SongResultBody(
                song: song.song, results: song.jobs.map { SongJobAnswer(job: $0.job, attempt: $0.attempt, error: error) }))
    }

    /// The RESULT message.
    public var message: WorkerMessage { .songResult(result, envelope: envelope) }
}
