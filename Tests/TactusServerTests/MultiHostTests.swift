import Foundation
import TactusAnalysis
import TactusDetector
import TactusAudio
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import TactusZMQ
import Testing

/// `make multihost`: a coordinator and two worker hosts, each in its own network namespace,
/// joined by veth links; one worker host's link is cut in the middle of a batch. Only with
/// `TACTUS_MULTIHOST=1`; skipped, with the reason, where namespaces cannot be made (it needs
/// root, iproute2 and veth support). `TACTUS_MULTIHOST_SONGS` sets the batch size (default 40).
///
/// ```
///  host a  10.201.1.2 uplink ── to-a 10.201.1.1 ┐
///                                               coordinator: backend tcp://0.0.0.0:5556 (CURVE),
///  host b  10.201.2.2 uplink ── to-b 10.201.2.1 ┘  frontend and events on ipc:// for the test
/// ```
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_MULTIHOST"] == "1", "set TACTUS_MULTIHOST=1 (make multihost)"))
struct MultiHostTests {
    private static let detectors = BuiltinDetectors.registry.defaultNames
    private static let songCount = ProcessInfo.processInfo.environment["TACTUS_MULTIHOST_SONGS"].flatMap(Int.init) ?? 40
    private static let songSeconds = 45.0
    /// The coordinator purges a worker silent for the liveness (7.5 s since its last message,
    /// sent before the cut); the rest is slack for a loaded machine.
    private static let noticeBound = Liveness.expiry + .seconds(2)

    private static let hosts = ["a": (coordinator: "10.201.1.1", worker: "10.201.1.2"), "b": (coordinator: "10.201.2.1", worker: "10.201.2.2")]

    /// The three namespaces and their links, or a skip saying why they cannot be made here.
    private static func makeLab() throws -> NetworkLab {
        do {
            let lab = try NetworkLab(hosts: ["coord", "a", "b"])
            for (host, addresses) in hosts.sorted(by: { $0.key < $1.key }) {
                try lab.link("coord", "to-\(host)", addresses.coordinator, to: host, "uplink", addresses.worker)
            }
            return lab
        } catch let error as NetworkLab.Unavailable {
            print("multihost: SKIPPED: \(error)")
            try Test.cancel("SKIPPED: \(error)")
        }
    }

    private static func log(_ text: String) {
        print("multihost: \(text)")
        fflush(nil)
    }

    @Test func cuttingAWorkerHostsLinkMidBatchRequeuesItsJobsOnTheOtherHost() throws {
        let testStarted = ContinuousClock.now
        let lab = try Self.makeLab()
        let namespaces = Array(lab.namespaces.values)
        defer {
            lab.tearDown()
            let left = Set(NetworkLab.existing()).intersection(namespaces)
            #expect(left.isEmpty, "namespaces left behind: \(left.sorted())")
        }
        let directory = try TemporaryDirectory(prefix: "tactus-multihost")
        let batch = try (0..<Self.songCount).map { index in
            let signal = Synth.clickTrack(bpm: 80 + Double(index % 90) + Double(index / 90) * 0.5, seconds: Self.songSeconds, sampleRate: 22050)
            return try AudioFileWriter(.wav16).encode([signal], sampleRate: 22050)
        }
        let synthesised = ContinuousClock.now - testStarted

        let keys = directory.path + "/keys", clients = directory.path + "/clients", authorized = directory.path + "/workers"
        let serverKeys = try GeneratedKeys.generate("server", in: keys)
        let clientKeys = try GeneratedKeys.generate("client", in: keys)
        var workerKeys: [String: GeneratedKeys] = [:]
        for host in Self.hosts.keys { workerKeys[host] = try GeneratedKeys.generate("host-\(host)", in: keys) }
        for directory in [clients, authorized] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: clientKeys.public_file, toPath: "\(clients)/\(clientKeys.name).key")
        for admitted in workerKeys.values {
            try FileManager.default.copyItem(atPath: admitted.public_file, toPath: "\(authorized)/\(admitted.name).key")
        }

        let server = try ServeProcess(
            dataDirectory: directory.path + "/data",
            extraArguments: [
                "--no-local-workers", "--backend", "tcp://0.0.0.0:5556",
                "--frontend", "ipc://\(directory.path)/frontend", "--events", "ipc://\(directory.path)/events",
                "--curve-secret-key", serverKeys.secret_file, "--authorized-clients", clients, "--authorized-workers", authorized,
                "--log-level", "warning",
            ],
            captureErrors: true, launcher: { lab.command(in: "coord", $0) })
        let client = try ServerClient(
            server.endpoints, curve: CurveClientKeys(serverKeyFile: serverKeys.public_file, secretKeyFile: clientKeys.secret_file))
        var events = WorkerEvents()

        var workers: [Process] = []
        defer { WorkerProcesses.stop(workers) }
        for (host, addresses) in Self.hosts.sorted(by: { $0.key < $1.key }) {
            for detector in Self.detectors {
                workers.append(
                    try WorkerProcesses.start(
                        lab.command(in: host, [
                            CLI.binary, "worker", "--connect", "tcp://\(addresses.coordinator):5556", "--detector", detector,
                            "--id", "host-\(host)/\(detector)", "--curve-server-key", serverKeys.public_file,
                            "--curve-secret-key", workerKeys[host]!.secret_file, "--log-level", "warning",
                        ]),
                        log: directory.file("host-\(host)-\(detector).log")))
            }
        }
        let workerIDs = { (host: String) in Set(Self.detectors.map { "host-\(host)/\($0)" }) }
        try events.wait(timeout: .seconds(30), on: client.events) { $0.joined.keys.count == 2 * Self.detectors.count }
        #expect(Set(events.joined.keys) == workerIDs("a").union(workerIDs("b")), "every worker joined over its link")
        let setUp = ContinuousClock.now - testStarted - synthesised

        // The batch; the cut as soon as host a's workers hold jobs.
        let started = ContinuousClock.now
        var songs = Set<SongID>()
        for (index, bytes) in batch.enumerated() {
            guard let response = try client.submit(bytes, name: "song-\(index).wav").answer(SubmitCommand.self) else {
                throw ServerTestError("submission \(index) was refused")
            }
            songs.insert(response.song)
        }
        let submitted = ContinuousClock.now
        var heldByA = Set<Int64>()
        let busyDeadline = ContinuousClock.now + .seconds(30)
        while heldByA.isEmpty && ContinuousClock.now < busyDeadline {
            heldByA = try Self.jobs(heldBy: "host-a/", client)
            if heldByA.isEmpty { Thread.sleep(forTimeInterval: 0.02) }
        }
        try #require(!heldByA.isEmpty, "host a's workers never held a job")
        try lab.setLink("coord", "to-a", up: false)
        let cut = ContinuousClock.now
        let cutDate = Date()

        // What host a holds in the coordinator's view from just after the cut (messages already
        // on their way have arrived) until its workers are purged; nothing arrives from it.
        Thread.sleep(forTimeInterval: 0.5)
        heldByA = []
        let noticeDeadline = cut + Self.noticeBound
        while !workerIDs("a").isSubset(of: events.lost.keys) && ContinuousClock.now < noticeDeadline {
            heldByA.formUnion(try Self.jobs(heldBy: "host-a/", client))
            try events.drain(client.events)
            Thread.sleep(forTimeInterval: 0.1)
        }
        let lostA = workerIDs("a").compactMap { events.lost[$0] }
        #expect(lostA.count == Self.detectors.count, "the coordinator noticed only \(lostA.count) of host a's workers gone")
        #expect(lostA.allSatisfy { $0.reason.contains("silent") }, "\(lostA.map(\.reason))")
        let noticed = lostA.map { $0.at - cut }

        let finished = try client.waitForSongs(songs, timeout: .seconds(90))
        let batchEnd = ContinuousClock.now
        #expect(finished == songs, "\(songs.count - finished.count) songs never finished")

        // The link back: host a's workers reconnect and get work again.
        try lab.setLink("coord", "to-a", up: true)
        let linkUp = ContinuousClock.now
        try events.wait(timeout: .seconds(45), on: client.events) { events in
            workerIDs("a").allSatisfy { (events.joined[$0]?.count ?? 0) >= 2 }
        }
        let rejoined = ContinuousClock.now - linkUp
        var secondBatch = Set<SongID>()
        for index in 0..<4 {
            let signal = Synth.clickTrack(bpm: 100 + Double(index * 7), seconds: 20, sampleRate: 22050)
            guard let response = try client.submit(
                try AudioFileWriter(.wav16).encode([signal], sampleRate: 22050), name: "after-\(index).wav").answer(SubmitCommand.self)
            else { throw ServerTestError("a submission after the link came back was refused") }
            secondBatch.insert(response.song)
        }
        #expect(try client.waitForSongs(secondBatch, timeout: .seconds(60)) == secondBatch)
        try events.drain(client.events)
        #expect(workerIDs("b").isDisjoint(with: events.lost.keys), "host b lost workers: \(events.lost)")

        #expect(server.stop() == 0)
        let serverLog = server.errors
        #expect(WorkerProcesses.stop(workers) == Array(repeating: 0, count: workers.count), "every worker stops cleanly")

        // The library: every job done once, the requeued ones exactly those host a held.
        let library = try Library(path: directory.path + "/data/library.sqlite", options: .init(mode: .readOnly))
        #expect(try library.integrityCheck() == ["ok"])
        var requeued = Set<Int64>()
        var secondBatchWorkers = Set<String>()
        var analysesByHost: [String: Int] = [:]
        for song in songs.union(secondBatch) {
            let id = song
            let jobs = try library.jobs(of: id)
            #expect(jobs.count == Self.detectors.count && Set(jobs.map(\.detector)) == Set(Self.detectors), "\(song): \(jobs.count) jobs")
            #expect(jobs.allSatisfy { $0.state == .done }, "\(song): \(jobs.map(\.state))")
            let analyses = try library.analyses(of: id)
            #expect(analyses.count == Self.detectors.count && Set(analyses.map(\.record.analysis.detector)) == Set(Self.detectors),
                    "\(song): \(analyses.count) analyses")
            if secondBatch.contains(song) {
                secondBatchWorkers.formUnion(jobs.compactMap(\.worker))
            } else {
                for analysis in analyses {
                    let host = String(analysis.record.worker?.prefix { $0 != "/" } ?? "none")
                    analysesByHost[host, default: 0] += 1
                    // Nothing from host a after the cut (what was on its way at the cut has had 0.5 s).
                    #expect(host != "host-a" || analysis.record.analyzedAt < cutDate + 0.5, "\(song): stored from host a after the cut")
                }
            }
            for job in jobs where job.attempts > 1 {
                requeued.insert(job.id)
                #expect(job.attempts == 2 && job.worker?.hasPrefix("host-b/") == true, "job \(job.id): \(job.attempts) attempts, \(job.worker ?? "-")")
            }
        }
        #expect(requeued == heldByA, "requeued \(requeued.sorted()), held by host a at the cut \(heldByA.sorted())\n\(serverLog)")
        #expect(workerIDs("a").isSubset(of: secondBatchWorkers), "host a's workers after the link came back: \(secondBatchWorkers.sorted())")

        Self.log("\(songs.count) songs of \(Int(Self.songSeconds)) s, \(Self.detectors.count) detectors, workers on 2 hosts; submitted in \(Self.seconds(submitted - started))")
        Self.log("host a's link cut \(Self.seconds(cut - started)) into the batch; coordinator noticed its \(lostA.count) workers gone after \(noticed.map(Self.seconds).sorted().joined(separator: ", ")) and requeued \(requeued.count) jobs (\(heldByA.count) held by host a), each finished on host b at attempt 2")
        Self.log("batch done \(Self.seconds(batchEnd - cut)) after the cut; wall time \(Self.seconds(batchEnd - started)) for \(songs.count) songs; analyses by host: \(analysesByHost.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        Self.log("host a's workers back \(Self.seconds(rejoined)) after its link came up, and ran jobs of a second batch of \(secondBatch.count) songs")
        Self.log("whole test \(Self.seconds(ContinuousClock.now - testStarted)) (hosts made and songs synthesised in \(Self.seconds(synthesised)), keys, coordinator and workers up in \(Self.seconds(setUp)))")
    }

    /// The jobs the coordinator has running on workers whose id starts with `prefix`.
    private static func jobs(heldBy prefix: String, _ client: ServerClient) throws -> Set<Int64> {
        guard let status = try client.request(.status(StatusRequest())).answer(StatusCommand.self), let server = status.server else {
            throw ServerTestError("no server status")
        }
        return Set(server.workers.filter { $0.workerId.hasPrefix(prefix) }.compactMap(\.job))
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18)
    }
}

/// When workers joined and were lost, from the coordinator's events.
private struct WorkerEvents {
    var joined: [String: [ContinuousClock.Instant]] = [:]
    var lost: [String: (at: ContinuousClock.Instant, reason: String)] = [:]

    /// Reads every event waiting on `socket`.
    mutating func drain(_ socket: ZMQSocket) throws {
        while let frames = try socket.tryReceive() { try record(frames) }
    }

    /// Reads events until `condition` holds; throws after `timeout`.
    mutating func wait(timeout: Duration, on socket: ZMQSocket, until condition: (WorkerEvents) -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            guard ContinuousClock.now < deadline else { throw ServerTestError("timed out waiting for workers: \(joined.keys.sorted())") }
            if let frames = try socket.receive(timeout: .milliseconds(100)) { try record(frames) }
        }
    }

    private mutating func record(_ frames: [[UInt8]]) throws {
        switch try Event(frames: frames) {
        case .workerJoined(let event): joined[event.workerId, default: []].append(.now)
        case .workerLost(let event): lost[event.workerId] = (.now, event.reason ?? "")
        default: break
        }
    }
}

/// `tactus worker` processes started by a launcher, their output in a log file each.
private enum WorkerProcesses {
    static func start(_ command: (executable: String, arguments: [String]), log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments
        guard FileManager.default.createFile(atPath: log, contents: nil) else { throw ServerTestError("cannot create \(log)") }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return process
    }

    /// SIGTERM to each running worker, SIGKILL to any still running 10 s later; returns their
    /// termination statuses (a worker stopped by SIGTERM exits 0).
    @discardableResult
    static func stop(_ processes: [Process]) -> [Int32] {
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(10)
        while processes.contains(where: \.isRunning) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
        return processes.map(\.terminationStatus)
    }
}
