import Foundation
import TactusAudio
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// The client commands of the `tactus` binary against a fake frontend and events socket.
@Suite struct ClientCommandTests {
    /// Answers the first `submit` with `busy`, the others with one queued job (the song id is
    /// the SHA-256 of the bytes, as the coordinator's) and publishes the song's `song.done`; answers
    /// `result` with a 120 BPM analysis and `status` with the finished job.
    static func fakeServer() throws -> FakeFrontend {
        let descriptor = DetectorDescriptor(name: "comb-filter", version: "9", summary: "test", specific: [])
        let submissions = Locked(0)
        return try FakeFrontend { request in
            let body = request.body
            if body.request(SubmitCommand.self) != nil, submissions.withLock({ count in count += 1; return count }) == 1 {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: "submit",
                    error: ErrorBody(code: .busy, message: "the queue is full", retryAfterMs: 300))])
            } else if let submit = body.request(SubmitCommand.self) {
                let song = SongID(hashing: submit.audio ?? [])
                let queued = JobInfo(job: 1, song: song, detector: "comb-filter", state: .queued)
                var done = queued
                (done.state, done.attempt) = (.done, 1)
                return .init(
                    replies: [ClientReply(requestID: request.requestID, .submit(SubmitResponse(song: song, jobs: [queued])))],
                    events: [.songDone(SongDoneEvent(song: song, jobs: [done], consensus: ConsensusTempo(bpm: 120, detectors: ["comb-filter"])))])
            } else if let result = body.request(ResultCommand.self) {
                let analysis = TempoAnalysis(
                    descriptor: descriptor, params: ParameterSet(["preset": .text("default")]),
                    output: DetectorOutput(bpm: 120, confidence: 0.9, candidates: [TempoCandidate(bpm: 120, strength: 1)], windows: []),
                    seconds: 0.5)
                let envelope: [Float]? = result.envelope == true ? [0.5, 0.25, 0] : nil
                return .init(replies: [ClientReply(requestID: request.requestID, .result(ResultResponse(
                    song: SongID(result.song) ?? SongID(hashing: []), analyses: [analysis], consensus: ConsensusTempo(bpm: 120, detectors: ["comb-filter"]),
                    envelopeHopS: envelope == nil ? nil : 0.5), envelope: envelope))])
            } else if let status = body.request(StatusCommand.self), status.song == nil && status.job == nil {
                let server = ServerStatus(
                    queue: ["comb-filter": 3], workers: [WorkerInfo(workerId: "host:1", detector: "comb-filter", version: "9", job: 7)],
                    jobsPerSecond: 1.5, uptimeS: 3700, accepting: true)
                return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [], server: server)))])
            } else if let status = body.request(StatusCommand.self) {
                let song = status.song.flatMap(SongID.init) ?? SongID(hashing: [])
                let job = JobInfo(job: status.job ?? 1, song: song, detector: "comb-filter", state: .done, attempt: 1)
                return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [job])))])
            } else if let cancel = body.request(CancelCommand.self) {
                return .init(replies: [ClientReply(requestID: request.requestID, .cancel(CancelResponse(cancelled: cancel.job.map { [$0] } ?? [4, 5])))])
            } else if body.request(DetectorsCommand.self) != nil {
                let offered = OfferedDetector(detector: DetectorInfo(descriptor), workers: 2, queued: 3)
                return .init(replies: [ClientReply(requestID: request.requestID, .detectors(DetectorsResponse(detectors: [offered])))])
            } else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: request.body.command.name,
                    error: ErrorBody(code: .unknownCommand, message: "not in this fake"))])
            }
        }
    }

    @Test func submitWaitSendsAudioFilesFoundByContentAndPrintsEachResult() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-submit-test")
        let nested = directory.file("album")
        try FileManager.default.createDirectory(atPath: nested, withIntermediateDirectories: true)
        let signal = Synth.clickTrack(bpm: 120, seconds: 6, sampleRate: 22_050)
        // Names that lie: recognition is by content.
        try AudioFileWriter(.flac).write([signal], sampleRate: 22_050, to: directory.file("first.dat"))
        try AudioFileWriter(.wav16).write([signal], sampleRate: 22_050, to: "\(nested)/second.mp3")
        #expect(FileManager.default.createFile(atPath: directory.file("notes.wav"), contents: Data("not audio".utf8)))

        let server = try Self.fakeServer()
        defer { server.stop() }
        let run = try CLI.run([
            "submit", directory.path, "--wait", "--json", "--server", server.frontend, "--events", server.events,
            "--detector", "comb-filter", "--param", "comb-filter.preset=classic",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let allLines = try run.standardOutput.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        // The file that is not audio is named with why it was skipped.
        let skipped = allLines.filter { $0["skipped"] != nil }
        #expect(skipped.map { $0["file"] as? String } == [directory.file("notes.wav")])
        #expect((skipped.first?["skipped"] as? [String: Any])?["code"] as? String == "unsupported-format")
        let lines = allLines.filter { $0["skipped"] == nil }
        #expect(lines.map { $0["file"] as? String } == [directory.file("album/second.mp3"), directory.file("first.dat")])
        for line in lines {
            #expect((line["song"] as? String)?.count == 64)
            #expect((line["jobs"] as? [[String: Any]])?.first?["state"] as? String == "done")
            #expect((line["analyses"] as? [[String: Any]])?.first?["bpm"] as? Double == 120)
            #expect((line["consensus"] as? [String: Any])?["bpm"] as? Double == 120)
        }
        #expect(run.standardError.contains("2 songs submitted, 2 finished, 0 failed, 1 file skipped (not audio)"))

        let submits = server.requests.compactMap { request -> SubmitRequest? in
            if let submit = request.body.request(SubmitCommand.self), submit.audio?.isEmpty == false { return submit.body }
            return nil
        }
        // The first was answered `busy` and sent again after the wait it asked for.
        #expect(submits.count == 3)
        #expect(run.seconds >= 0.3)
        #expect(submits.allSatisfy { $0.detectors == ["comb-filter"] && $0.params?["comb-filter"]?["preset"] == .text("classic") })
    }

    /// Every file of a folder that is not sent is named with its reason, in the listing and in
    /// `--json`: not audio, or unreadable (a symbolic link that loops or leads nowhere).
    @Test func skippedFilesAreNamedWithTheirReasons() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-skip-test")
        let signal = Synth.clickTrack(bpm: 120, seconds: 6, sampleRate: 22_050)
        try AudioFileWriter(.flac).write([signal], sampleRate: 22_050, to: directory.file("song.flac"))
        #expect(FileManager.default.createFile(atPath: directory.file("notes.txt"), contents: Data("not audio".utf8)))
        try FileManager.default.createSymbolicLink(atPath: directory.file("loop-a"), withDestinationPath: directory.file("loop-b"))
        try FileManager.default.createSymbolicLink(atPath: directory.file("loop-b"), withDestinationPath: directory.file("loop-a"))
        try FileManager.default.createSymbolicLink(atPath: directory.file("gone.mp3"), withDestinationPath: directory.file("nowhere"))
        let server = try Self.fakeServer()
        defer { server.stop() }
        let json = try CLI.run(["submit", directory.path, "--json", "--server", server.frontend])
        let lines = try json.standardOutput.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let skipped = Dictionary(uniqueKeysWithValues: lines.compactMap { line -> (String, String)? in
            guard let file = line["file"] as? String, let reason = line["skipped"] as? [String: Any] else { return nil }
            return ((file as NSString).lastPathComponent, reason["code"] as? String ?? "")
        })
        #expect(skipped == ["notes.txt": "unsupported-format", "loop-a": "unreadable", "loop-b": "unreadable", "gone.mp3": "unreadable"])
        #expect(json.standardError.contains("4 files skipped (1 not audio, 3 unreadable)"), "\(json.standardError)")
        let text = try CLI.run(["submit", directory.path, "--server", server.frontend])
        for name in ["notes.txt", "loop-a", "loop-b", "gone.mp3"] {
            #expect(text.standardOutput.contains(directory.file(name) + "  skipped: "), "\(name) not named: \(text.standardOutput)")
        }
        #expect(text.standardOutput.contains("leads nowhere or loops"))
    }

    /// A server that stops while a folder is being sent: the songs it accepted resume by
    /// themselves after its restart, so the advice is not to submit them again.
    @Test func aStoppingServerIsExplainedWithoutAdvisingToResubmit() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-stop-test")
        for (index, bpm) in [100.0, 130.0].enumerated() {
            let signal = Synth.clickTrack(bpm: bpm, seconds: 6, sampleRate: 22_050)
            try AudioFileWriter(.flac).write([signal], sampleRate: 22_050, to: directory.file("song\(index).flac"))
        }
        let submissions = Locked(0)
        let server = try FakeFrontend { request in
            guard let submit = request.body.request(SubmitCommand.self) else {
                let state = ServerStatus(queue: [:], workers: [], jobsPerSecond: 0, uptimeS: 1, accepting: false)
                return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [], server: state)))])
            }
            guard submissions.withLock({ count in count += 1; return count }) == 1 else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: "submit",
                    error: ErrorBody(code: .unavailable, message: "the server is stopping", retryAfterMs: 5000))])
            }
            let song = SongID(hashing: submit.audio ?? [])
            let queued = JobInfo(job: 1, song: song, detector: "comb-filter", state: .queued)
            return .init(replies: [ClientReply(requestID: request.requestID, .submit(SubmitResponse(song: song, jobs: [queued])))])
        }
        defer { server.stop() }
        let run = try CLI.run(["submit", directory.path, "--server", server.frontend])
        #expect(run.status == 1)
        #expect(run.standardError.contains("resume by themselves when it restarts"), "\(run.standardError)")
        #expect(run.standardError.contains("do not submit them again"), "\(run.standardError)")
        #expect(!run.standardError.contains("submit again after it restarts"), "\(run.standardError)")
    }

    /// Whether process `pid` has a handler for SIGINT (its `SigCgt` mask in Linux's `/proc/PID/status`).
    static func catchesSIGINT(_ pid: Int32) -> Bool {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let mask = status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }.flatMap {
            UInt64($0.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        return (mask ?? 0) & (1 << (UInt64(SIGINT) - 1)) != 0
    }

    /// Ctrl-C while waiting ends the wait, saying that the songs go on at the server.
    @Test func anInterruptedWaitSaysTheSongsGoOnAtTheServer() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-interrupt-test")
        let signal = Synth.clickTrack(bpm: 120, seconds: 6, sampleRate: 22_050)
        try AudioFileWriter(.flac).write([signal], sampleRate: 22_050, to: directory.file("song.flac"))
        // Songs are accepted and never finish.
        let server = try FakeFrontend { request in
            if let submit = request.body.request(SubmitCommand.self) {
                let song = SongID(hashing: submit.audio ?? [])
                let queued = JobInfo(job: 1, song: song, detector: "comb-filter", state: .queued)
                return .init(replies: [ClientReply(requestID: request.requestID, .submit(SubmitResponse(song: song, jobs: [queued])))])
            } else if let status = request.body.request(StatusCommand.self) {
                let queued = JobInfo(job: 1, song: status.song.flatMap(SongID.init) ?? SongID(hashing: []), detector: "comb-filter", state: .queued)
                return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [queued])))])
            } else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: request.body.command.name,
                    error: ErrorBody(code: .unknownCommand, message: "not in this fake"))])
            }
        }
        defer { server.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["submit", directory.file("song.flac"), "--wait", "--server", server.frontend, "--events", server.events]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        // Ctrl-C once the command waits for its song: it catches SIGINT from then on (before,
        // SIGINT would end it by the signal, or be ignored).
        try Wait.until("tactus submit to send its song", timeout: .seconds(20)) { !server.requests.isEmpty }
        try Wait.until("tactus submit --wait to catch SIGINT", timeout: .seconds(20)) { Self.catchesSIGINT(pid) }
        kill(pid, SIGINT)
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 130)
        #expect(text.contains("go on at the server"), "\(text)")
    }

    @Test(.enabled(if: CLI.pythonHasZMQ, "python3 with pyzmq (make deps installs it)"))
    func thePythonExampleClientSubmitsAFolderAndPrintsTheResults() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-client-py-test")
        let signal = Synth.clickTrack(bpm: 120, seconds: 6, sampleRate: 22_050)
        try AudioFileWriter(.wav16).write([signal], sampleRate: 22_050, to: directory.file("a.wav"))
        try AudioFileWriter(.flac).write([signal, signal], sampleRate: 22_050, to: directory.file("b.flac"))
        #expect(FileManager.default.createFile(atPath: directory.file("c.txt"), contents: Data("text".utf8)))
        let server = try Self.fakeServer()
        defer { server.stop() }
        let run = try CLI.python([
            CLI.repositoryRoot + "/protocol/examples/client.py", directory.path,
            "--server", server.frontend, "--events", server.events, "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = try run.standardOutput.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.map { $0["file"] as? String } == [directory.file("a.wav"), directory.file("b.flac")])
        #expect(lines.allSatisfy { ($0["consensus"] as? [String: Any])?["bpm"] as? Double == 120 })
        #expect(run.seconds < 5, "song.done events, not status polling, ended the wait")
    }

    /// A song over the 16 MiB a server takes in one message goes as an upload in chunks (SPEC
    /// section 3.9), against a real `tactus serve`.
    @Test(.enabled(if: CLI.pythonHasZMQ, "python3 with pyzmq (make deps installs it)"))
    func thePythonExampleClientUploadsASongOver16MiB() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-client-py-upload-test")
        let song = try drumWAV(bpm: 120, seconds: 200)
        #expect(song.count > 16 << 20)
        #expect(FileManager.default.createFile(atPath: directory.file("long.wav"), contents: Data(song)))
        let server = try ServeProcess(dataDirectory: directory.file("data"), workersPerDetector: 1)
        defer { server.stop() }
        let run = try CLI.python([
            CLI.repositoryRoot + "/protocol/examples/client.py", directory.path, "--detector", "comb-filter",
            "--server", server.endpoints.frontend, "--events", server.endpoints.events, "--json", "--timeout", "30",
        ], timeout: .seconds(300))
        #expect(run.status == 0, "\(run.standardError)")
        let line = try #require(run.jsonLines.first, "\(run.standardOutput)\n\(run.standardError)")
        #expect(line["file"] as? String == directory.file("long.wav"))
        #expect(line["song"] as? String == SongID(hashing: song).hex, "\(line)")
    }

    @Test func aNamedFileThatIsNotAudioIsAnErrorLine() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-submit-test")
        #expect(FileManager.default.createFile(atPath: directory.file("readme.flac"), contents: Data("hello".utf8)))
        let server = try Self.fakeServer()
        defer { server.stop() }
        let run = try CLI.run(["submit", directory.file("readme.flac"), "--json", "--server", server.frontend])
        #expect(run.status == 1)
        let line = try #require(JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect((line["error"] as? [String: Any])?["code"] as? String == "unsupported-format")
        #expect(server.requests.isEmpty)
    }

    @Test func anAbsentServerIsAClearErrorWithinSeconds() throws {
        let endpoint = try SilentServer().endpoint  // closed again: nothing listens there
        let run = try CLI.run(["status", "--server", endpoint, "--timeout", "0.5"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("no answer from \(endpoint) within 1 s (2 attempts)"), "\(run.standardError)")
        #expect(run.seconds < 4)
    }

    /// A server that accepts the connection but does not answer (a loaded machine) is waited
    /// for with a message after each wait, up to --patience (issue 13, item 10).
    @Test func aConnectedServerThatIsSlowIsWaitedForWithProgressMessages() throws {
        let server = try SilentServer()
        let run = try CLI.run(["status", "--server", server.endpoint, "--timeout", "0.5", "--patience", "2"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("\(server.endpoint) has not answered 'status' for"), "\(run.standardError)")
        #expect(run.standardError.contains("keeps waiting"), "\(run.standardError)")
        #expect(run.standardError.contains("is connected but did not answer within 2 s"), "\(run.standardError)")
        #expect(run.seconds >= 2 && run.seconds < 6)
    }

    @Test func statusResultCancelAndDetectorsPrintWhatTheServerSays() throws {
        let server = try Self.fakeServer()
        defer { server.stop() }
        let song = String(repeating: "ab", count: 32)
        func json(_ arguments: [String]) throws -> [[String: Any]] {
            let run = try CLI.run(arguments + ["--json", "--server", server.frontend])
            #expect(run.status == 0, "\(arguments): \(run.standardError)")
            return try run.standardOutput.split(separator: "\n").map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
        let job = try json(["status", "12"])
        #expect(job.count == 1 && job[0]["job"] as? Int == 12 && job[0]["state"] as? String == "done")
        let songJobs = try json(["status", song])
        #expect(songJobs.first?["song"] as? String == song)
        let state = try json(["status"])
        #expect(state.first?["queue"] as? [String: Int] == ["comb-filter": 3] && state.first?["uptime_s"] as? Double == 3700)

        let result = try #require(try json(["result", song, "--envelope"]).first)
        #expect((result["analyses"] as? [[String: Any]])?.first?["bpm"] as? Double == 120)
        let envelope = try #require(result["envelope"] as? [String: Any])
        #expect(envelope["hop_s"] as? Double == 0.5 && envelope["values"] as? [Double] == [0.5, 0.25, 0])
        #expect(result["envelope_hop_s"] == nil)

        #expect(try json(["cancel", song]).first?["cancelled"] as? [Int] == [4, 5])
        let detectors = try json(["detectors"])
        #expect(detectors.first?["name"] as? String == "comb-filter" && detectors.first?["workers"] as? Int == 2)

        let text = try CLI.run(["status", "--server", server.frontend])
        #expect(
            text.standardOutput.contains("accepting work, up 1 h 01 min") && text.standardOutput.contains("host:1  comb-filter 9  job 7"))
        let commands = server.requests.map { request in request.body.command.name }
        #expect(commands == ["status", "status", "status", "result", "cancel", "detectors", "status"])
    }
}

/// The `--json` output of the commands that ask a server is the protocol's answer, or one
/// item of it per line: each checked with python `jsonschema` against the reply schema of the
/// command the CLI sent (named from the protocol's table of commands).
@Suite struct ServerJSONShapeTests {
    /// `tactus ARGUMENTS --json` against `server`, its lines validated against `part` (a JSON
    /// Pointer, empty for the whole body) of the reply schema of `command`.
    func expectShape<C: ClientCommand>(
        _ arguments: [String], sends command: C.Type, part: String = "", server: FakeFrontend,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let run = try CLI.run(arguments + ["--json", "--server", server.frontend])
        #expect(run.status == 0, "\(arguments): \(run.standardError)", sourceLocation: sourceLocation)
        #expect(server.requests.last?.body.command.name == command.name, sourceLocation: sourceLocation)
        let problems = try ReplySchema.problems(of: run.standardOutput, command: command.name, part: part)
        #expect(problems == nil, "\(arguments): \(problems ?? "")", sourceLocation: sourceLocation)
    }

    @Test func theJSONOfStatusResultCancelAndDetectorsIsTheProtocolsAnswer() throws {
        let server = try ClientCommandTests.fakeServer()
        defer { server.stop() }
        let song = String(repeating: "ab", count: 32)
        try expectShape(["status", "12"], sends: StatusCommand.self, part: "/properties/jobs/items", server: server)
        try expectShape(["status", song], sends: StatusCommand.self, part: "/properties/jobs/items", server: server)
        try expectShape(["status"], sends: StatusCommand.self, part: "/properties/server", server: server)
        try expectShape(["result", song], sends: ResultCommand.self, server: server)
        try expectShape(["cancel", song], sends: CancelCommand.self, server: server)
        // `detectors --json` is not the wire's `{detector, workers, queued}`: each line is the
        // declaration as `tactus detectors --json` prints it without a server, with `workers`
        // and `queued` added (ClientCommandTests checks those fields).
    }
}
