import Foundation
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

@testable import TactusCoordinator

/// A detector the server does not know is accepted only while a worker offers it: once its
/// last worker has been gone for the grace, its queued jobs fail with `unknown-detector`
/// instead of leaving their songs pending for ever. A known detector's jobs wait.
@Suite struct AbandonedDetectorTests {
    @Test func aDetectorIsDueOnlyOnceUnofferedForTheWholeGrace() {
        var abandoned = AbandonedDetectors(grace: .seconds(10))
        let start = ContinuousClock.now
        #expect(abandoned.due(queued: ["plugin"], available: [], at: start).isEmpty)
        #expect(abandoned.due(queued: ["plugin"], available: [], at: start + .seconds(9)).isEmpty)
        #expect(abandoned.due(queued: ["plugin", "known"], available: ["known"], at: start + .seconds(10)) == ["plugin"])
        // Offered again, then gone again: the grace starts over.
        #expect(abandoned.due(queued: ["plugin"], available: ["plugin"], at: start + .seconds(11)).isEmpty)
        #expect(abandoned.due(queued: ["plugin"], available: [], at: start + .seconds(12)).isEmpty)
        #expect(abandoned.due(queued: ["plugin"], available: [], at: start + .seconds(21)).isEmpty)
        #expect(abandoned.due(queued: ["plugin"], available: [], at: start + .seconds(22)) == ["plugin"])
        // No queued job any more: forgotten.
        #expect(abandoned.due(queued: [], available: [], at: start + .seconds(23)).isEmpty)
        #expect(abandoned.due(queued: ["plugin"], available: [], at: start + .seconds(24)).isEmpty)
    }

    @Test func theQueuedJobsOfAPluginWhoseWorkersLeftFailAfterTheGrace() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.abandonedDetectorGraceS = 1 }
        defer { running.stop() }
        let client = try TestClient(running)
        let plugin = try TestWorker(running, detector: "made-up", id: "plugin")
        try client.waitForWorkers(1, heartbeating: plugin)
        // A default submission asks for the plugin and for the known detector, which has no worker.
        let outcome = try client.request(.submit(SubmitRequest(name: "song.wav"), audio: try testSong()))
        let submitted = try #require(outcome.answer(SubmitCommand.self), "\(outcome)")
        #expect(submitted.jobs.count == 2)
        // The plugin leaves holding its job: the job goes back to the queue, with no worker for it.
        try plugin.socket.send(try WorkerMessage.disconnect(DisconnectBody(reason: "leaving")).frames())

        let failed = try client.waitForEvent(timeout: .seconds(15)) { if case .jobFailed = $0 { true } else { false } }
        guard case .jobFailed(let body)? = failed else { Issue.record("no job.failed"); return }
        #expect(body.detector == "made-up")
        #expect(body.error.code == .unknownDetector)
        #expect(body.error.message.contains("no worker has offered detector 'made-up' for 1 s"), "\(body.error.message)")

        let status = try #require(try client.request(.status(StatusRequest(song: submitted.song))).answer(StatusCommand.self))
        let states = Dictionary(uniqueKeysWithValues: status.jobs.map { ($0.detector, $0.state) })
        #expect(states == ["made-up": .failed, "fake": .queued], "a known detector's job waits for its worker")
        // The known detector's job is still given to a worker that comes.
        let worker = try TestWorker(running, id: "w1")
        let job = try #require(try worker.nextJob(timeout: .seconds(10)))
        #expect(job.0.song == submitted.song)
    }

    @Test func aPluginWhoseWorkerComesBackWithinTheGraceKeepsItsJobs() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.abandonedDetectorGraceS = 3 }
        defer { running.stop() }
        let client = try TestClient(running)
        let first = try TestWorker(running, detector: "made-up", id: "plugin")
        try client.waitForWorkers(1, heartbeating: first)
        let outcome = try client.request(.submit(SubmitRequest(name: "song.wav", detectors: ["made-up"]), audio: try testSong()))
        let submitted = try #require(outcome.answer(SubmitCommand.self), "\(outcome)")
        try first.socket.send(try WorkerMessage.disconnect(DisconnectBody(reason: "restarting")).frames())
        _ = try client.workers(0, heartbeating: {})

        // Gone for two thirds of the grace: the job waits, and goes to the worker that comes back.
        Thread.sleep(forTimeInterval: 2)
        let again = try TestWorker(running, detector: "made-up", id: "plugin-again")
        let job = try #require(try again.nextJob(timeout: .seconds(10)))
        #expect(job.0.song == submitted.song && job.0.attempt == 2)
        try again.finish(job.0, bpm: 120, detector: "made-up")
        let done = try client.waitForEvent { if case .songDone(let body) = $0 { body.song == submitted.song } else { false } }
        guard case .songDone(let body)? = done else { Issue.record("no song.done"); return }
        #expect(body.consensus.bpm == 120)
    }
}
