import Foundation
import TactusClient
import TactusProtocol
import TactusTestSupport
import Testing

/// A real `tactus serve` with its local workers on a machine whose processes are late to run
/// (issue 13, item 10): a worker holding a job is not taken for dead while its process is
/// alive and its job within its time limit, and clients wait for a server that is connected
/// but slow instead of giving up.
@Suite(.serialized) struct LoadTests {
    /// A local worker stopped (SIGSTOP) for longer than its liveness while it analyses a song:
    /// the extreme of a process starved of CPU. Its heartbeats are late by seconds, but its
    /// process is alive and its job within its time limit: it keeps its job (one attempt, no
    /// `worker.lost`) and the job ends done once it runs again.
    @Test func aLocalWorkerStoppedPastItsLivenessKeepsItsJob() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-stall-test")
        let song = try longDrumWAV(minutes: 8)
        let server = try ServeProcess(dataDirectory: directory.file("data"), workersPerDetector: 1)
        defer { server.stop() }
        let client = try TactusClient(server: server.endpoints.frontend, timeout: .seconds(5))
        let subscriber = try EventSubscriber(endpoint: server.endpoints.events, topics: ["worker:"], context: client.context)
        try awaitWorker(of: "comb-filter", client)

        let submitted = try client.submit(SubmitRequest(name: "long.wav", detectors: ["comb-filter"]), audio: song)
        let job = try #require(submitted.jobs.first?.job)
        let worker = try awaitRunning(job, client)
        let processID = try #require(worker.split(separator: ":").last.flatMap { Int32($0) }, "worker id \(worker)")
        #expect(server.workerProcessIDs.contains(processID))
        kill(processID, SIGSTOP)
        Thread.sleep(forTimeInterval: 10)  // the liveness is 7.5 s
        let stillRunning = try client.status(job: job).jobs.first
        kill(processID, SIGCONT)
        #expect(stillRunning?.state == .running, "\(String(describing: stillRunning))")

        let finished = try awaitFinal(job, client, within: .seconds(180))
        #expect(finished.state == .done, "\(finished)")
        #expect(finished.attempt == 1, "the job was taken from its worker: \(finished)")
        var lost: [WorkerEvent] = []
        while let event = try subscriber.next(timeout: .milliseconds(200)) {
            if case .workerLost(let body) = event { lost.append(body) }
        }
        #expect(lost.isEmpty, "\(lost)")
    }

    /// Four busy processes per core while a folder is submitted and waited for, with a short
    /// `--timeout`: every song is sent and analysed, no worker is lost, and the client does
    /// not give up.
    @Test func underFourBusyProcessesPerCoreNothingIsPurgedNorGivenUp() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-load-test")
        let folder = directory.file("songs")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let tempi = [96.0, 112, 128, 144]
        for (index, bpm) in tempi.enumerated() {
            let signal = Synth.drumPattern(bpm: bpm, seconds: 8, sampleRate: 22_050)
            try AudioFileWriter(.flac).write([signal], sampleRate: 22_050, to: "\(folder)/song\(index).flac")
        }
        // The analyses at the hogs' priority, so that they take seconds, not minutes (at the
        // default --worker-nice 10 a worker's analysis gets 1 % of a core beside 8 busy
        // processes); the heartbeats keep their priority either way.
        let server = try ServeProcess(
            dataDirectory: directory.file("data"), workersPerDetector: 1, extraArguments: ["--worker-nice", "0"])
        defer { server.stop() }
        let client = try TactusClient(server: server.endpoints.frontend, timeout: .seconds(5))
        let subscriber = try EventSubscriber(endpoint: server.endpoints.events, topics: ["worker:"], context: client.context)
        try awaitWorker(of: "comb-filter", client)

        let hog = try CPUHog(processes: 4 * ProcessInfo.processInfo.activeProcessorCount)
        defer { hog.stop() }
        let run = try CLI.run([
            "submit", folder, "--wait", "--json", "--server", server.endpoints.frontend, "--events", server.endpoints.events,
            "--timeout", "0.5",
        ])
        hog.stop()
        #expect(run.status == 0, "\(run.standardError)")
        let songs = run.jsonLines.filter { $0["song"] != nil }
        #expect(songs.count == tempi.count, "\(run.standardOutput)\n\(run.standardError)")
        for line in songs {
            let jobs = line["jobs"] as? [[String: Any]] ?? []
            #expect(!jobs.isEmpty && jobs.allSatisfy { $0["state"] as? String == "done" && $0["attempt"] as? Int == 1 }, "\(line)")
        }
        #expect(!run.standardError.contains("no answer"), "\(run.standardError)")
        var lost: [WorkerEvent] = []
        while let event = try subscriber.next(timeout: .milliseconds(200)) {
            if case .workerLost(let body) = event { lost.append(body) }
        }
        #expect(lost.isEmpty, "\(lost)")
    }

    private func awaitWorker(of detector: String, _ client: TactusClient) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try client.detectors().detectors.contains(where: { $0.detector.name == detector && $0.workers > 0 }) { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        Issue.record("no \(detector) worker joined within 30 s")
    }

    /// The id of the worker running `job`, once it runs.
    private func awaitRunning(_ job: Int64, _ client: TactusClient) throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let worker = try client.status().server?.workers.first(where: { $0.job == job }) { return worker.workerId }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw LoadTestError(description: "job \(job) did not start within 30 s")
    }

    private func awaitFinal(_ job: Int64, _ client: TactusClient, within limit: Duration) throws -> JobInfo {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let info = try client.status(job: job).jobs.first, info.state.isFinal { return info }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw LoadTestError(description: "job \(job) did not end within \(limit)")
    }
}

struct LoadTestError: Error, CustomStringConvertible {
    let description: String
}
