import Foundation
import Synchronization
import TactusDetector
import TactusProtocol
import TactusTestSupport
import Testing

/// A worker's RESULT of megabytes (55 000 windows, 3.6 MB of JSON, which the JSON decoder takes
/// seconds over on a busy machine): stored whole, while another client's requests are answered within
/// half a second.
/// (The windows have no tempo, so that the tempo map, made from at most 256 of them, is not
/// what is measured.)
@Suite struct LargeResultTests {
    /// A coordinator whose worker `w1` holds the job of a song just submitted.
    struct HeldJob {
        let running: RunningCoordinator
        let client: TestClient
        let worker: TestWorker
        let submitted: SubmitResponse
        let job: JobBody

        /// Stops the coordinator again when any step fails.
        init(in directory: TemporaryDirectory) throws {
            let running = try RunningCoordinator(directory: directory.path)
            do {
                let client = try TestClient(running)
                let worker = try TestWorker(running, id: "w1")
                let submit = ClientRequest.Body.submit(SubmitRequest(name: "song.wav", detectors: ["fake"]), audio: try testSong())
                submitted = try #require(try client.request(submit).answer(SubmitCommand.self))
                job = try #require(try worker.nextJob()).0
                (self.running, self.client, self.worker) = (running, client, worker)
            } catch {
                running.stop()
                throw error
            }
        }
    }

    @Test func aResultOfMegabytesIsDecodedWhileOtherClientsAreAnswered() throws {
        let directory = try TemporaryDirectory()
        let held = try HeldJob(in: directory)
        let (running, client, worker, submitted, job) = (held.running, held.client, held.worker, held.submitted, held.job)
        defer { running.stop() }

        // On a busy machine, another client asks for the status every 20 ms meanwhile, and keeps
        // the slowest answer.
        let hog = try CPUHog(processes: 2 * ProcessInfo.processInfo.activeProcessorCount)
        defer { hog.stop() }
        let slowest = Mutex<Duration>(.zero)
        let watching = Atomic(true)
        // Used by the probing thread alone.
        nonisolated(unsafe) let probe = try TestClient(running)
        let thread = Thread {
            while watching.load(ordering: .relaxed) {
                let started = ContinuousClock.now
                let answered = (try? probe.request(.status(StatusRequest()), timeout: .seconds(10))) != nil
                let took = answered ? ContinuousClock.now - started : .seconds(10)
                slowest.withLock { $0 = max($0, took) }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        thread.start()
        let descriptor = DetectorDescriptor(name: "fake", version: "1.0", summary: "", specific: [])
        let windows = (0..<55_000).map { AnalysisWindow(startS: Double($0), durationS: 8, energy: 0, bpm: nil, strength: 1) }
        let analysis = TempoAnalysis(
            descriptor: descriptor, params: try descriptor.resolve(),
            output: DetectorOutput(bpm: 120, confidence: 0.9, candidates: [TempoCandidate(bpm: 120, strength: 1)], windows: windows),
            seconds: 0.01)
        let result = ResultBody(
            job: job.job, attempt: job.attempt, analysis: analysis, audio: AudioFacts(format: "wav", durationS: 55_008, sampleRate: 22050, channels: 1))
        let frames = try WorkerMessage.result(result, envelope: nil).frames()
        #expect(frames[2].count > 3_000_000)
        try worker.socket.send(frames)
        let done = try client.waitForEvent(timeout: .seconds(120)) { if case .songDone(let body) = $0 { body.song == submitted.song } else { false } }
        watching.store(false, ordering: .relaxed)
        while thread.isExecuting { Thread.sleep(forTimeInterval: 0.01) }

        try #require(done != nil, "the result was not stored within 120 s")
        let stored = try #require(try client.request(.result(ResultRequest(song: submitted.song.hex, windows: true))).answer(ResultCommand.self))
        #expect(stored.body.analyses.first?.windows.count == 55_000)
        let took = slowest.withLock { $0 }
        #expect(took < .milliseconds(500), "a status took \(took) while the result was read")
    }

    /// A RESULT whose analysis lists 30,000 candidates (the fourth attack round's took the
    /// coordinator 44 s of CPU to store, and every later `result` of the song a second): the
    /// 32 strongest are kept.
    @Test func aResultWithThousandsOfCandidatesKeepsTheStrongest() throws {
        let directory = try TemporaryDirectory()
        let held = try HeldJob(in: directory)
        let (running, client, worker, submitted, job) = (held.running, held.client, held.worker, held.submitted, held.job)
        defer { running.stop() }
        let descriptor = DetectorDescriptor(name: "fake", version: "1.0", summary: "", specific: [])
        let candidates = (0..<30_000).map { TempoCandidate(bpm: 60 + Double($0 % 14_000) / 100, strength: 1 / Double($0 + 1)) }
        let analysis = TempoAnalysis(
            descriptor: descriptor, params: try descriptor.resolve(),
            output: DetectorOutput(bpm: 120, confidence: 0.9, candidates: candidates, windows: []), seconds: 0.01)
        let result = ResultBody(
            job: job.job, attempt: job.attempt, analysis: analysis, audio: AudioFacts(format: "wav", durationS: 2, sampleRate: 22050, channels: 1))
        try worker.socket.send(try WorkerMessage.result(result, envelope: nil).frames())
        let done = try client.waitForEvent(timeout: .seconds(120)) { if case .songDone(let body) = $0 { body.song == submitted.song } else { false } }
        try #require(done != nil, "the result was not stored within 120 s")
        let stored = try #require(try client.request(.result(ResultRequest(song: submitted.song.hex))).answer(ResultCommand.self))
        #expect(stored.body.analyses.first?.candidates == Array(candidates.prefix(32)))
    }
}
