import ArgumentParser
import Foundation
import TactusAudio
import TactusClient
import TactusDetector
import TactusModel
import TactusProtocol

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
            progress bar on standard error when that is a terminal, then prints a summary.

            With --json: one object per file and per line, {file, song, jobs [{job, song, \
            detector, state, attempt, error?}]}, with --wait also analyses (as `tactus \
            analyze --json` prints them) and consensus; a file that could not be submitted has \
            {file, error {code, message}}.

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
        _ = try SubmittedParameters(parameters)
        if wait && events == nil && CoordinatorEndpoints.events(forFrontend: server.endpoint) == nil {
            throw ValidationError("Give --events: it cannot be derived from --server \(server.endpoint).")
        }
    }

    func run() throws {
        let request = SubmitRequest(
            detectors: detectorNames.isEmpty ? nil : detectorNames, params: try SubmittedParameters(parameters).byDetector,
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
            try session.report(file: problem.file, error: problem.error)
        }
        try session.waitForAll()
        session.printSummary(skipped: found.skipped)
        if session.failures > 0 { throw ExitCode.failure }
    }
}

/// `--param NAME.KEY=VALUE` values, by detector. Values are typed by their look (`120` a
/// number, `0,200,400` numbers, anything else a word); the server checks them against the
/// detector's declarations.
struct SubmittedParameters {
    var byDetector: [String: ParameterSet]?

    init(_ assignments: [String]) throws {
        var sets: [String: ParameterSet] = [:]
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            let path = parts.first?.split(separator: ".", maxSplits: 1).map(String.init) ?? []
            guard parts.count == 2, path.count == 2, !path[0].isEmpty, !path[1].isEmpty else {
                throw ValidationError("--param takes DETECTOR.KEY=VALUE, for example comb-filter.preset=classic (got '\(assignment)').")
            }
            sets[path[0], default: ParameterSet()][path[1]] = Self.value(parts[1])
        }
        byDetector = sets.isEmpty ? nil : sets
    }

    static func value(_ text: String) -> ParameterValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Double(trimmed), number.isFinite { return .number(number) }
        let parts = trimmed.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        if trimmed.contains(","), parts.allSatisfy({ $0?.isFinite == true }) { return .numbers(parts.compactMap { $0 }) }
        return .text(trimmed)
    }
}

/// The audio files among paths: files as named, directories searched recursively in name
/// order, audio recognised by content (``AudioStream`` reads the header).
struct AudioFiles {
    var files: [String] = []
    /// Named files that are not audio or cannot be read.
    var problems: [(file: String, error: ErrorBody)] = []
    /// Files found in directories that are not audio.
    var skipped = 0

    static func find(_ paths: [String]) -> AudioFiles {
        var found = AudioFiles()
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                found.problems.append((path, ErrorBody(code: .unreadable, message: "\(path): no such file or directory")))
                continue
            }
            if !isDirectory.boolValue {
                if let error = notAudio(path) { found.problems.append((path, error)) } else { found.files.append(path) }
                continue
            }
            let entries = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
            for entry in entries.sorted() {
                let file = (path as NSString).appendingPathComponent(entry)
                var entryIsDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: file, isDirectory: &entryIsDirectory), !entryIsDirectory.boolValue
                else { continue }
                if notAudio(file) == nil { found.files.append(file) } else { found.skipped += 1 }
            }
        }
        return found
    }

    /// Why `file` is not an audio file to send, or nil when it is one. A file that claims an
    /// audio format but is damaged is sent all the same: the server reports its problem.
    static func notAudio(_ file: String) -> ErrorBody? {
        do throws(AudioError) {
            _ = try AudioStream(.file(file))
            return nil
        } catch {
            switch error {
            case .empty, .unsupportedFormat, .unreadable: return ErrorBody(code: ErrorCode(rawValue: error.code), message: error.description)
            default: return nil
            }
        }
    }
}

/// One `submit` run: sends songs, follows them to the end with `--wait`, prints each and the summary.
final class SubmitSession {
    private let client: TactusClient
    private let request: SubmitRequest
    private let subscriber: EventSubscriber?
    private let json: Bool
    private let progress: ProgressBar?
    /// Files per song id still being analysed (the same bytes may be in several files).
    private var pending: [String: [String]] = [:]
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastStatusCheck: ContinuousClock.Instant
    private(set) var submitted = 0
    private(set) var finished = 0
    private(set) var failures = 0

    init(client: TactusClient, request: SubmitRequest, eventsEndpoint: String?, json: Bool, progress: ProgressBar?) throws {
        self.client = client
        self.request = request
        self.json = json
        subscriber = try eventsEndpoint.map { try EventSubscriber(endpoint: $0, context: client.context, curve: client.curve) }
        self.progress = progress
        start = clock.now
        lastStatusCheck = clock.now
    }

    /// Sends one file, waiting while the server is busy. Refusals that concern only this
    /// file (too large) are reported and counted; others end the run.
    func submit(_ file: String) throws {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            try report(file: file, error: ErrorBody(code: .unreadable, message: "\(file): \(error.localizedDescription)"))
            return
        }
        // Subscribing before sending means no event of this song is missed.
        let expected = Self.songID(bytes)
        try subscriber?.subscribe(expected)
        var songRequest = request
        songRequest.name = (file as NSString).lastPathComponent
        guard let response = try submitWhileBusy(songRequest, bytes: bytes, file: file) else {
            try subscriber?.unsubscribe(expected)
            return
        }
        submitted += 1
        if response.song != expected { try subscriber?.subscribe(response.song) }
        guard subscriber != nil else {
            if json {
                try Output.jsonLine(SubmittedSong(file: file, song: response.song, jobs: response.jobs))
            } else {
                print(Self.text(file, response))
            }
            return
        }
        pending[response.song, default: []].append(file)
        if response.jobs.allSatisfy(\.state.isFinal) { try finish(response.song, jobs: response.jobs) }
        try drainEvents(for: .zero)
    }

    /// Sends `request`, again after each `busy` answer once the wait it asks for is over; nil
    /// (after reporting it) when the server refuses this song as too large.
    private func submitWhileBusy(_ request: SubmitRequest, bytes: [UInt8], file: String) throws -> SubmitResponse? {
        while true {
            let client = self.client
            switch Result(catching: { () throws(ClientError) in try client.submit(request, audio: bytes) }) {
            case .success(let response):
                return response
            case .failure(.rejected(let error)) where error.code == .busy:
                try pause(for: .milliseconds(max(error.retryAfterMs ?? 1000, 50)))
            case .failure(.rejected(let error)) where error.code == .tooLarge:
                try report(file: file, error: error)
                return nil
            case .failure(let error):
                throw error
            }
        }
    }

    /// With `--wait`: follows the events until every song is done, asking `status` every few
    /// seconds for songs whose events may have been missed.
    func waitForAll() throws {
        guard subscriber != nil else { return }
        while !pending.isEmpty {
            try drainEvents(for: .milliseconds(500))
            if clock.now - lastStatusCheck >= .seconds(5) {
                lastStatusCheck = clock.now
                for song in pending.keys.sorted().prefix(50) {
                    let jobs = try client.status(song: song).jobs
                    if !jobs.isEmpty, jobs.allSatisfy(\.state.isFinal) { try finish(song, jobs: jobs) }
                }
            }
        }
        progress?.clear()
    }

    /// Prints a file that could not be submitted, and counts it.
    func report(file: String, error: ErrorBody) throws {
        failures += 1
        if json {
            try Output.jsonLine(SubmittedSong(file: file, error: error))
        } else {
            FileHandle.standardError.write(Data("\(file): \(error.code): \(error.message)\n".utf8))
        }
    }

    func printSummary(skipped: Int) {
        let seconds = (clock.now - start).seconds
        var summary = "\(submitted) song\(submitted == 1 ? "" : "s") submitted"
        if subscriber != nil { summary += ", \(finished) finished" }
        summary += ", \(failures) failed"
        if skipped > 0 { summary += ", \(skipped) file\(skipped == 1 ? "" : "s") skipped (not audio)" }
        summary += String(format: " in %.1f s", seconds)
        // Standard output holds only JSON Lines with --json.
        if json {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        } else {
            print(summary)
        }
    }

    private func pause(for duration: Duration) throws {
        if subscriber != nil {
            try drainEvents(for: duration)
        } else {
            Thread.sleep(forTimeInterval: duration.seconds)
        }
    }

    /// Handles the events that arrive within `duration` (those already waiting with `.zero`).
    private func drainEvents(for duration: Duration) throws {
        guard let subscriber else { return }
        let deadline = clock.now + duration
        while let event = try subscriber.next(timeout: max(deadline - clock.now, .zero)) {
            if case .songDone(let done) = event, pending[done.song] != nil {
                try finish(done.song, jobs: done.jobs)
            }
        }
        progress?.draw(done: finished, failed: failures, elapsed: clock.now - start)
    }

    /// A song is done: fetches its analyses and prints it for each of its files.
    private func finish(_ song: String, jobs: [JobInfo]) throws {
        guard let files = pending.removeValue(forKey: song) else { return }
        try subscriber?.unsubscribe(song)
        var analyses: [TempoAnalysis] = []
        var consensus = ConsensusTempo(bpm: nil, detectors: [])
        if jobs.contains(where: { $0.state == .done }) {
            let result = try client.result(ResultRequest(song: song)).response
            analyses = result.analyses
            consensus = result.consensus
        }
        let failed = jobs.contains { $0.state != .done }
        for file in files {
            finished += 1
            if failed { failures += 1 }
            let line = SubmittedSong(file: file, song: song, jobs: jobs, analyses: analyses, consensus: consensus)
            progress?.clear()
            if json {
                try Output.jsonLine(line)
            } else {
                print(Self.text(file, jobs: jobs, analyses: analyses, consensus: consensus))
            }
        }
    }

    static func songID(_ bytes: [UInt8]) -> String {
        SongID(hashing: bytes).hex
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
    var song: String?
    var jobs: [JobInfo]?
    var analyses: [TempoAnalysis]?
    var consensus: ConsensusTempo?
    var error: ErrorBody?

    init(
        file: String, song: String? = nil, jobs: [JobInfo]? = nil, analyses: [TempoAnalysis]? = nil,
        consensus: ConsensusTempo? = nil, error: ErrorBody? = nil
    ) {
        self.file = file
        self.song = song
        self.jobs = jobs
        self.analyses = analyses
        self.consensus = consensus
        self.error = error
    }
}

extension JobState {
    /// Done, failed or cancelled: the job will not change any more.
    var isFinal: Bool { self == .done || self == .failed || self == .cancelled }
}

/// `[########------]  12/40 songs, 1 failed, 3.2 songs/s, 9 s left` on standard error.
final class ProgressBar {
    /// The songs to follow.
    let total: Int
    private var drawn = false

    init(total: Int) {
        self.total = total
    }

    func draw(done: Int, failed: Int, elapsed: Duration) {
        guard total > 0 else { return }
        let width = 24
        let filled = min(width, done * width / total)
        let seconds = elapsed.seconds
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var line = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        line += "  \(done)/\(total) songs, \(failed) failed"
        if done > 0 && rate > 0 {
            line += String(format: ", %.1f songs/s, ", rate) + ServerText.duration(Double(total - done) / rate) + " left"
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    /// Erases the bar, so that a line printed next starts clean.
    func clear() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
