import ArgumentParser
import Foundation
import TactusAudio
import TactusClient
import TactusDetector
import TactusModel
import TactusProtocol

extension Tactus {
    /// `tactus submit PATH...`: sends songs to the server for analysis, and with `--wait`
    /// follows them to the end.
    struct Submit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "submit",
            abstract: "Send songs to the server for analysis.",
            discussion: """
                Each PATH is a file or a directory, searched recursively; only audio files are \
                sent, recognised by their content whatever their names (other files found in \
                directories are skipped; a named file that is not audio is an error). A song \
                already analysed with the same detector version and parameters is answered from \
                the store unless --force. When the server is busy, submit waits as long as it asks.

                With --wait, submit follows the songs through the server's events (--events, by \
                default the server's host with its port plus 2) until every song is done, with a \
                progress bar on standard error when that is a terminal, then prints a summary. \
                Each song's line, its failures and the exit status count only the jobs this \
                submission got, not earlier analyses of the song nor other clients' jobs.

                With --json: one object per file and per line, {file, song, jobs [{job, song, \
                detector, state, attempt, error?}]}, with --wait also analyses (as `tactus \
                analyze --json` prints them) and consensus; a file that could not be submitted has \
                {file, error {code, message}}; a file found in a directory and not sent has {file, \
                skipped {code, message}} (unsupported-format or empty: not audio; unreadable: no \
                permission, or a symbolic link that leads nowhere or loops), also listed without \
                --json as FILE  skipped: CODE: MESSAGE.

                Exit status: 0 when every song was submitted (and with --wait analysed), 1 \
                otherwise, 2 on usage errors.
                """
        )

        @Argument(help: ArgumentHelp("Audio files or directories.", valueName: "path"))
        var paths: [String]

        @Option(name: .customLong("detector"), help: ArgumentHelp(
            "Analyse with this detector (repeatable; every detector the server offers by default).", valueName: "name"))
        var detectorNames: [String] = []

        @Option(name: .customLong("param"), help: ArgumentHelp(
            "Set a detector parameter, for example comb-filter.preset=classic (repeatable).", valueName: "name.key=value"))
        var parameters: [String] = []

        @Flag(help: "Analyse again even when the store has a result for the same detector version and parameters.")
        var force = false

        @Flag(help: "Wait until every song is analysed.")
        var wait = false

        @Flag(help: "Print one JSON object per file and per line (JSON Lines).")
        var json = false

        @Option(help: ArgumentHelp(
            "The server's events endpoint, for --wait (default: the server's host, its port plus 2).", valueName: "endpoint"))
        var events: String?

        @OptionGroup var server: ServerOptions

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("Give at least one file or directory.") }
            for name in detectorNames {
                guard (1...64).contains(name.utf8.count),
                    name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" })
                else { throw ValidationError("'\(name)' is not a detector name (lowercase letters, digits and dashes).") }
            }
            _ = try Self.parameterSets(parameters)
            if wait && events == nil && CoordinatorEndpoints.events(forFrontend: server.endpoint) == nil {
                throw ValidationError("Give --events: it cannot be derived from --server \(server.endpoint).")
            }
        }

        func run() throws {
            let request = SubmitRequest(
                detectors: detectorNames.isEmpty ? nil : detectorNames, params: try Self.parameterSets(parameters),
                force: force ? true : nil)
            let client = try server.client()
            var eventsEndpoint: String?
            if wait { eventsEndpoint = events ?? CoordinatorEndpoints.events(forFrontend: server.endpoint) }
            let found = AudioFiles.find(paths)
            let session = try SubmitSession(
                client: client, request: request, eventsEndpoint: eventsEndpoint, json: json,
                progress: wait && isatty(STDERR_FILENO) == 1 ? ProgressBar(total: found.files.count) : nil)
            for file in found.files {
                try session.submit(file)
            }
            for problem in found.problems {
                try session.report(file: problem.file, error: ErrorBody(problem))
            }
            for skipped in found.skipped {
                try session.reportSkipped(file: skipped.file, reason: ErrorBody(skipped))
            }
            try session.waitForAll()
            session.printSummary(skipped: found.skipped)
            if session.failures > 0 { throw ExitCode.failure }
        }

        /// `--param DETECTOR.KEY=VALUE` values, by detector, typed by their look (the server checks
        /// them against the detectors' declarations); nil for none.
        static func parameterSets(_ assignments: [String]) throws -> [String: ParameterSet]? {
            var sets: [String: ParameterSet] = [:]
            for text in assignments {
                guard let assignment = ParameterAssignment(parsing: text) else {
                    throw ValidationError("--param takes DETECTOR.KEY=VALUE, for example comb-filter.preset=classic (got '\(text)').")
                }
                sets[assignment.detector, default: ParameterSet()][assignment.key] = assignment.valueByLook
            }
            return sets.isEmpty ? nil : sets
        }
    }
}

/// One `submit` run: sends songs (a ``SongBatch``), prints each as it is submitted or, with
/// `--wait`, as it finishes, and the summary.
final class SubmitSession {
    private let request: SubmitRequest
    private let json: Bool
    private let progress: ProgressBar?
    private var batch: SongBatch!
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private(set) var submitted = 0
    private(set) var finished = 0
    private(set) var failures = 0

    init(client: TactusClient, request: SubmitRequest, eventsEndpoint: String?, json: Bool, progress: ProgressBar?) throws {
        self.request = request
        self.json = json
        self.progress = progress
        start = clock.now
        batch = try SongBatch(
            client: client, events: eventsEndpoint,
            eventsRead: { [unowned self] in progress?.draw(done: finished, failed: failures, elapsed: clock.now - start) },
            finished: { [unowned self] in try finish($0) })
    }

    /// Sends one file, waiting while the server is busy. Refusals that concern only this
    /// file (too large, not audio, damaged: ``ErrorCode/concernsTheSong``) are reported and
    /// counted, and the run goes on; others end it.
    func submit(_ file: String) throws {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            try report(file: file, error: ErrorBody(code: .unreadable, message: "\(file): \(error.localizedDescription)"))
            return
        }
        var songRequest = request
        songRequest.name = (file as NSString).lastPathComponent
        let response: SubmitResponse
        do {
            response = try batch.submit(songRequest, audio: bytes, label: file)
        } catch ClientError.rejected(let error) where error.code.concernsTheSong {
            try report(file: file, error: error)
            return
        } catch ClientError.rejected(let error) where error.code == .unavailable && serverIsStopping() {
            progress?.clear()
            throw CommandFailure(
                "\(file): the server is stopping and takes no more songs. The \(submitted) song\(submitted == 1 ? "" : "s") "
                    + "submitted before stay queued there and resume by themselves when it restarts: do not submit them "
                    + "again (--force would redo their work). Submit the files not sent yet after the restart "
                    + "(the server said: \(error.message))")
        }
        submitted += 1
        guard !batch.isFollowing else { return }
        if json {
            try Output.jsonLine(SubmittedSong(file: file, song: response.song, jobs: response.jobs))
        } else {
            print(Self.text(file, response))
        }
    }

    /// With `--wait`: follows the events until every song is done. Ctrl-C (SIGINT) ends the
    /// wait, saying that the songs go on at the server.
    func waitForAll() throws {
        guard batch.isFollowing else { return }
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let pending = submitted - finished
        // The progress bar's line is erased (not left glued to the message).
        let erase = progress == nil ? "" : "\r\u{1B}[K"
        signal(SIGINT, SIG_IGN)
        interrupt.setEventHandler {
            FileHandle.standardError.write(Data(
                (erase + "interrupted: the songs submitted (\(pending) not finished when the wait began) go on at the server; "
                    + "follow them with `tactus status SONG`, or see their results with `tactus result SONG`\n").utf8))
            Foundation.exit(130)
        }
        interrupt.resume()
        defer {
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
        }
        try batch.waitForAll()
        progress?.clear()
    }

    /// Whether the server says it no longer accepts submissions (it is stopping), as opposed to
    /// being unable to store one now (a full disk, a locked library).
    private func serverIsStopping() -> Bool {
        (try? batch.client.status())?.server?.accepting == false
    }

    /// Prints a file that could not be submitted, and counts it.
    func report(file: String, error: ErrorBody) throws {
        failures += 1
        if json {
            try Output.jsonLine(SubmittedSong(file: file, error: error))
        } else {
            printError("\(file): \(error.code): \(error.message)")
        }
    }

    /// Prints a file found in a directory that is not sent, with why (not counted as a failure).
    func reportSkipped(file: String, reason: ErrorBody) throws {
        progress?.clear()
        if json {
            try Output.jsonLine(SubmittedSong(file: file, skipped: reason))
        } else {
            print("\(file)  skipped: \(reason.code): \(reason.message)")
        }
    }

    func printSummary(skipped: [AudioFiles.Problem]) {
        let seconds = (clock.now - start).seconds
        var summary = "\(submitted) song\(submitted == 1 ? "" : "s") submitted"
        if batch.isFollowing { summary += ", \(finished) finished" }
        summary += ", \(failures) failed"
        if !skipped.isEmpty {
            let unreadable = skipped.filter { $0.code == .unreadable }.count
            let reasons = [(skipped.count - unreadable, "not audio"), (unreadable, "unreadable")].filter { $0.0 > 0 }
            let why = reasons.count == 1 ? reasons[0].1 : reasons.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
            summary += ", \(skipped.count) file\(skipped.count == 1 ? "" : "s") skipped (\(why))"
        }
        summary += String(format: " in %.1f s", seconds)
        // Standard output holds only JSON Lines with --json.
        if json {
            printError(summary)
        } else {
            print(summary)
        }
    }

    /// A song is done: fetches its analyses and prints it for each of its files.
    private func finish(_ done: SongBatch.Finished) throws {
        var analyses: [TempoAnalysis] = []
        var consensus = ConsensusTempo(bpm: nil, detectors: [])
        if done.jobs.contains(where: { $0.state == .done }) {
            let result = try batch.client.result(ResultRequest(song: done.song)).response
            analyses = result.analyses
            consensus = result.consensus
        }
        let failed = done.jobs.contains { $0.state != .done }
        for file in done.labels {
            finished += 1
            if failed { failures += 1 }
            let line = SubmittedSong(file: file, song: done.song, jobs: done.jobs, analyses: analyses, consensus: consensus)
            progress?.clear()
            if json {
                try Output.jsonLine(line)
            } else {
                print(Self.text(file, jobs: done.jobs, analyses: analyses, consensus: consensus))
            }
        }
    }

    static func text(_ file: String, _ response: SubmitResponse) -> String {
        "\(file)  \(response.song)  " + response.jobs.map { "\($0.detector) \($0.state.rawValue) (job \($0.job))" }.joined(separator: ", ")
    }

    static func text(_ file: String, jobs: [JobInfo], analyses: [TempoAnalysis], consensus: ConsensusTempo) -> String {
        let parts = jobs.map { job -> String in
            if let analysis = analyses.first(where: { $0.detector == job.detector }) {
                return "\(job.detector) " + (analysis.bpm.map { String(format: "%.2f", $0) } ?? "no tempo")
            }
            return "\(job.detector) \(job.state.rawValue)" + (job.error.map { ": \($0.code)" } ?? "")
        }
        return "\(file)  \(ServerText.bpm(consensus.bpm))  (\(parts.joined(separator: ", ")))"
    }
}

/// One line of `submit --json`.
struct SubmittedSong: Encodable {
    var file: String
    var song: SongID?
    var jobs: [JobInfo]?
    var analyses: [TempoAnalysis]?
    var consensus: ConsensusTempo?
    var error: ErrorBody?
    /// Why a file found in a directory was not sent.
    var skipped: ErrorBody?

    init(
        file: String, song: SongID? = nil, jobs: [JobInfo]? = nil, analyses: [TempoAnalysis]? = nil,
        consensus: ConsensusTempo? = nil, error: ErrorBody? = nil, skipped: ErrorBody? = nil
    ) {
        self.file = file
        self.song = song
        self.jobs = jobs
        self.analyses = analyses
        self.consensus = consensus
        self.error = error
        self.skipped = skipped
    }
}

extension ErrorBody {
    /// What `submit` reports for a path it does not send: the problem's code and message.
    init(_ problem: AudioFiles.Problem) {
        self.init(code: problem.code, message: problem.message)
    }
}
