import Foundation
import TactusCoordinator
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// A worker of protocol version 2 played by the test: it offers several detectors and gets
/// all of a song's jobs for them in one JOB.
final class SongTestWorker {
    let socket: ZMQSocket
    let id: String

    init(_ running: RunningCoordinator, detectors: [String], id: String, roots: [String]? = nil, identifies: Bool? = nil) throws {
        self.id = id
        socket = try running.context.socket(.dealer)
        try socket.connect(running.endpoints.backend)
        let offers = try detectors.map { name in
            let descriptor = DetectorDescriptor(name: name, version: "1.0", summary: "a detector played by a test", specific: [])
            return DetectorOffer(detector: DetectorInfo(descriptor), params: try descriptor.resolve())
        }
        try socket.send(try WorkerMessage.offer(OfferBody(workerId: id, detectors: offers, roots: roots, identifies: identifies)).frames())
    }

    /// Waits for a JOB, heartbeating meanwhile; nil after `timeout`.
    func nextJob(timeout: Duration = .seconds(5)) throws -> (SongJobBody, [UInt8])? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            try heartbeat()
            if let frames = try socket.receive(timeout: .milliseconds(50)) {
                #expect(frames[0] == ProtocolVersion.v2.frame, "the coordinator answers a version-2 worker in version 2")
                if case .songJob(let body, let audio) = try CoordinatorMessage(frames: frames) { return (body, audio) }
            }
        }
        return nil
    }

    func heartbeat() throws {
        _ = try socket.trySend(try WorkerMessage.heartbeat.frames(version: .v2))
    }

    /// The analysis of `entry` at `bpm`.
    static func analysis(_ entry: SongJobEntry, bpm: Double) throws -> TempoAnalysis {
        let descriptor = DetectorDescriptor(name: entry.detector, version: "1.0", summary: "", specific: [])
        return TempoAnalysis(
            descriptor: descriptor, params: try descriptor.resolve(),
            output: DetectorOutput(
                bpm: bpm, confidence: 0.9, candidates: [TempoCandidate(bpm: bpm, strength: 1)],
                windows: [AnalysisWindow(startS: 0, durationS: 6, energy: 0.1, bpm: bpm, strength: 0.9)]),
            seconds: 0.01)
    }

    /// Sends one RESULT with `answers`.
    func answer(_ job: SongJobBody, _ answers: [SongJobAnswer]) throws {
        let succeeded = answers.contains { $0.analysis != nil }
        let body = SongResultBody(
            song: job.song, audio: succeeded ? AudioFacts(format: "wav", durationS: 6, sampleRate: 22050, channels: 1) : nil,
            envelopeHopS: succeeded ? 0.0232 : nil, results: answers)
        try socket.send(try WorkerMessage.songResult(body, envelope: succeeded ? [0.1, 0.2, 0.3] : nil).frames())
    }
}

@Suite(.serialized) struct SongJobTests {
    /// A coordinator that knows the detectors `fake` and `other`.
    private func coordinator(_ directory: TemporaryDirectory) throws -> RunningCoordinator {
        try RunningCoordinator(directory: directory.path) { configuration in
            configuration.knownDetectors = ["fake", "other"].map {
                DetectorDescriptor(name: $0, version: "1.0", summary: "a detector played by a test", specific: [])
            }
        }
    }

    /// A client, a worker `worker` offering both detectors, a song submitted, and the worker's JOB for it.
    private func firstJob(
        _ running: RunningCoordinator, worker id: String
    ) throws -> (client: TestClient, worker: SongTestWorker, response: SubmitResponse, job: SongJobBody) {
        let client = try TestClient(running)
        let worker = try SongTestWorker(running, detectors: ["fake", "other"], id: id)
        _ = try client.workers(1, heartbeating: worker.heartbeat)
        let response = try submit(client, try testSong())
        guard let (job, _) = try worker.nextJob() else { throw HarnessError("no JOB for the song") }
        return (client, worker, response, job)
    }

    private func submit(_ client: TestClient, _ bytes: [UInt8]) throws -> SubmitResponse {
        guard let response = try client.request(
            .submit(SubmitRequest(name: "song.wav", detectors: ["fake", "other"]), audio: bytes)).answer(SubmitCommand.self)
        else { throw HarnessError("submit failed") }
        return response
    }

    /// A worker that shares the coordinator's blob directory (as serve's local workers do) is
    /// sent an upload's location in it, not its bytes, and the file there is the song; a
    /// worker that does not share it gets the bytes.
    @Test func aWorkerSharingTheBlobDirectoryIsSentTheUploadsLocation() throws {
        let directory = try TemporaryDirectory()
        let running = try coordinator(directory)
        defer { running.stop() }
        let client = try TestClient(running)
        let blobRoot = running.coordinator.blobRoot
        #expect(blobRoot.hasPrefix("/") && blobRoot.hasSuffix("/blobs"))
        let local = try SongTestWorker(running, detectors: ["fake", "other"], id: "local", roots: [blobRoot])
        _ = try client.workers(1) { try local.heartbeat() }
        let bytes = try TestSong.clickTrack(bpm: 120, seconds: 8)
        let submitted = try submit(client, bytes)
        guard let (job, audio) = try local.nextJob() else {
            Issue.record("no JOB for the worker sharing the blob directory")
            return
        }
        #expect(audio.isEmpty, "the song's bytes do not travel")
        #expect(job.location == JobLocation(root: blobRoot, path: "\(submitted.song.hex.prefix(2))/\(submitted.song)"))
        if let location = job.location {
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: location.root + "/" + location.path))) == bytes)
        }

        let remote = try SongTestWorker(running, detectors: ["fake", "other"], id: "remote", roots: ["/elsewhere"])
        _ = try client.workers(2) { try local.heartbeat(); try remote.heartbeat() }
        let other = try TestSong.clickTrack(bpm: 100, seconds: 8)
        _ = try submit(client, other)
        guard let (otherJob, otherAudio) = try remote.nextJob() else {
            Issue.record("no JOB for the worker that does not share the blob directory")
            return
        }
        #expect(otherJob.location == nil)
        #expect(otherAudio == other)
    }

    @Test func aSongsJobsForAWorkersDetectorsGoInOneJobAndAreStoredOneByOne() throws {
        let directory = try TemporaryDirectory()
        let running = try coordinator(directory)
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try SongTestWorker(running, detectors: ["fake", "other"], id: "both")
        let workers = try client.workers(1, heartbeating: worker.heartbeat)
        #expect(workers.first?.detectors == ["fake", "other"])
        let bytes = try testSong()
        let response = try submit(client, bytes)

        let (job, audio) = try #require(try worker.nextJob())
        #expect(audio == bytes, "the song's bytes are sent once for both jobs")
        #expect(job.song == response.song && Set(job.jobs.map(\.detector)) == ["fake", "other"])
        #expect(job.jobs.allSatisfy { $0.attempt == 1 })
        guard let busy = try client.request(.status(StatusRequest())).answer(StatusCommand.self) else { return }
        #expect(busy.server?.workers.first?.jobs.map(Set.init) == Set(job.jobs.map(\.job)))

        // One detector succeeds, the other fails: each job ends on its own.
        let fake = try #require(job.jobs.first { $0.detector == "fake" })
        let other = try #require(job.jobs.first { $0.detector == "other" })
        try worker.answer(job, [
            SongJobAnswer(job: fake.job, attempt: fake.attempt, analysis: try SongTestWorker.analysis(fake, bpm: 128)),
            SongJobAnswer(job: other.job, attempt: other.attempt, error: ErrorBody(code: .invalidParameter, message: "no")),
        ])
        let done = try client.waitForEvent { if case .songDone(let body) = $0 { body.song == response.song } else { false } }
        guard case .songDone(let body)? = done else { Issue.record("no song.done"); return }
        #expect(Dictionary(uniqueKeysWithValues: body.jobs.map { ($0.detector, $0.state) }) == ["fake": .done, "other": .failed])
        #expect(body.consensus.bpm == 128)
        guard let (result, envelope) = try client.request(.result(ResultRequest(song: response.song, envelope: true))).answer(ResultCommand.self).map({ ($0.body, $0.envelope) })
        else { Issue.record("no result"); return }
        #expect(result.analyses.filter { $0.bpm != nil }.map(\.detector) == ["fake"])
        #expect(envelope == [0.1, 0.2, 0.3])
        // A failure in a RESULT is final: nothing is sent again.
        #expect(try worker.nextJob(timeout: .milliseconds(800)) == nil)
    }

    @Test func aJobTheResultDoesNotAnswerIsRetriedAloneAndTheOtherIsNotRedone() throws {
        let directory = try TemporaryDirectory()
        let running = try coordinator(directory)
        defer { running.stop() }
        let (client, worker, response, job) = try firstJob(running, worker: "both")
        let fake = try #require(job.jobs.first { $0.detector == "fake" })
        try worker.answer(job, [SongJobAnswer(job: fake.job, attempt: fake.attempt, analysis: try SongTestWorker.analysis(fake, bpm: 120))])

        let (again, _) = try #require(try worker.nextJob())
        #expect(again.jobs.map(\.detector) == ["other"] && again.jobs[0].attempt == 2)
        try worker.answer(again, [
            SongJobAnswer(job: again.jobs[0].job, attempt: 2, analysis: try SongTestWorker.analysis(again.jobs[0], bpm: 120))
        ])
        let done = try client.waitForEvent { if case .songDone(let body) = $0 { body.song == response.song } else { false } }
        guard case .songDone(let body)? = done else { Issue.record("no song.done"); return }
        #expect(body.jobs.allSatisfy { $0.state == .done })
        #expect(body.jobs.first { $0.detector == "fake" }?.attempt == 1, "the answered job was not redone")
    }

    /// A RESULT naming another song than its JOB's (with a beat grid) stores nothing for either
    /// song, and the jobs are sent again: it was stored as the JOB's song's analyses and grid.
    @Test func aResultForAnotherSongThanItsJobsStoresNothingAndIsRetried() throws {
        let directory = try TemporaryDirectory()
        let running = try coordinator(directory)
        defer { running.stop() }
        let (client, worker, response, job) = try firstJob(running, worker: "liar")
        let answers = try job.jobs.map { SongJobAnswer(job: $0.job, attempt: $0.attempt, analysis: try SongTestWorker.analysis($0, bpm: 120)) }
        let other = try #require(SongID(String(repeating: "ab", count: 32)))
        let body = SongResultBody(
            song: other, audio: AudioFacts(format: "wav", durationS: 6, sampleRate: 22050, channels: 1), results: answers,
            beatGrid: BeatGrid(bpm: 120, firstBeatS: 0.1, clarity: 2))
        try worker.socket.send(try WorkerMessage.songResult(body, envelope: nil).frames())

        let (again, _) = try #require(try worker.nextJob(), "the jobs were not sent again")
        #expect(again.song == response.song && again.jobs.allSatisfy { $0.attempt == 2 })
        let stored = try #require(try client.request(.result(ResultRequest(song: response.song.hex))).answer(ResultCommand.self))
        #expect(stored.body.analyses.isEmpty && stored.body.beatGrid == nil)
    }

    @Test func aLostWorkersJobsAreAllRequeuedForTheNextWorker() throws {
        let directory = try TemporaryDirectory()
        let running = try coordinator(directory)
        defer { running.stop() }
        let client = try TestClient(running)
        let first = try SongTestWorker(running, detectors: ["fake", "other"], id: "first")
        _ = try client.workers(1, heartbeating: first.heartbeat)
        _ = try submit(client, try testSong())
        let (job, _) = try #require(try first.nextJob())
        #expect(job.jobs.count == 2)
        try first.socket.send(try WorkerMessage.disconnect(DisconnectBody(reason: "leaving")).frames(version: .v2))
        let second = try SongTestWorker(running, detectors: ["fake", "other"], id: "second")
        let (again, _) = try #require(try second.nextJob())
        #expect(Set(again.jobs.map(\.job)) == Set(job.jobs.map(\.job)) && again.jobs.allSatisfy { $0.attempt == 2 })
    }

    @Test func version1AndVersion2WorkersShareTheQueuesLeastRecentlyUsedFirst() throws {
        let directory = try TemporaryDirectory()
        let running = try coordinator(directory)
        defer { running.stop() }
        let client = try TestClient(running)
        let single = try TestWorker(running, detector: "fake", id: "single")
        _ = try client.workers(1, heartbeating: single.heartbeat)
        let both = try SongTestWorker(running, detectors: ["fake", "other"], id: "both")
        _ = try client.workers(2, heartbeating: { try single.heartbeat(); try both.heartbeat() })
        _ = try submit(client, try testSong())
        // `single` has waited longest for `fake`: it gets that job (as a version-1 JOB); `both`
        // gets what is left of the song, the `other` job.
        let (fake, _) = try #require(try single.nextJob())
        let (rest, _) = try #require(try both.nextJob())
        #expect(rest.jobs.map(\.detector) == ["other"])
        #expect(fake.job != rest.jobs[0].job)
    }
}
