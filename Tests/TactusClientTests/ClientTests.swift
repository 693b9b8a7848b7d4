import Foundation
import TactusClient
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

@Suite struct ClientTests {
    @Test func anAbsentServerGivesAClearErrorQuicklyAfterOneRetry() throws {
        // A port nothing listens on: bound, then closed.
        let endpoint = try SilentServer().endpoint
        let client = try TactusClient(server: endpoint, timeout: .milliseconds(300), retries: 1)
        let start = ContinuousClock.now
        #expect {
            _ = try client.status()
        } throws: { error in
            (error as? ClientError) == .noAnswer(server: endpoint, seconds: 0.6, attempts: 2)
                && "\(error)".hasPrefix("no answer from \(endpoint) within 0.6 s")
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(600) && elapsed < .seconds(2))
    }

    /// A server that is connected (it accepts the connection) but does not answer is slow, not
    /// gone (issue 13, item 10): the client waits, telling each wait, up to its patience, without
    /// sending the request again while the connection holds.
    @Test func aConnectedServerThatDoesNotAnswerIsWaitedForUpToThePatience() throws {
        let server = try SilentServer()
        let client = try TactusClient(server: server.endpoint, timeout: .milliseconds(300), retries: 1)
        client.patience = .milliseconds(1500)
        let waits = Locked<[Duration]>([])
        client.onSlowAnswer = { command, waited in
            #expect(command == StatusCommand.name)
            waits.withLock { $0.append(waited) }
        }
        let start = ContinuousClock.now
        #expect {
            _ = try client.status()
        } throws: { error in
            guard case .unanswered(let endpoint, let seconds) = error as? ClientError else { return false }
            return endpoint == server.endpoint && seconds >= 1.5
                && "\(error)".contains("is connected but did not answer within")
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(1500) && elapsed < .seconds(4))
        // Told after each wait, the waits doubling: 0.3 s, then 0.9 s (0.3 + 0.6).
        let told = waits.withLock { $0 }
        #expect(told.count >= 2 && told.count <= 4, "\(told)")
        // Sent once: the connection never dropped.
        let requests = try server.drain()
        #expect(requests.count == 1)
        #expect(requests.allSatisfy { $0.body == .status(StatusRequest()) })
    }

    /// A server that answers after several timeouts' worth of time is waited for and answers.
    @Test func aSlowServerIsWaitedForAndItsAnswerTaken() throws {
        let frontend = try FakeFrontend { request in
            Thread.sleep(forTimeInterval: 1.5)
            return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [])))])
        }
        defer { frontend.stop() }
        let client = try TactusClient(server: frontend.frontend, timeout: .milliseconds(200), retries: 1)
        let slow = Locked(0)
        client.onSlowAnswer = { _, _ in slow.withLock { $0 += 1 } }
        #expect(try client.status().jobs.isEmpty)
        #expect(slow.withLock { $0 } >= 2)
        #expect(frontend.requests.count == 1)
    }

    @Test func aForcedSubmitIsNeverSentTwice() throws {
        let server = try SilentServer()
        let client = try TactusClient(server: server.endpoint, timeout: .milliseconds(200), retries: 3)
        client.patience = .seconds(1)
        #expect(throws: ClientError.self) {
            _ = try client.submit(SubmitRequest(force: true), audio: [1, 2, 3])
        }
        #expect(try server.drain().count == 1)
        #expect(ClientRequest.Body.submit(SubmitRequest(), audio: [1]).isIdempotent)
        #expect(!ClientRequest.Body.submit(SubmitRequest(force: true), audio: [1]).isIdempotent)
    }

    /// A request with a frame over what a server takes (1 MiB: it would drop the connection,
    /// unanswered) is refused before it is sent, naming the frame; a recording that large is
    /// sent as an upload instead, which begins with a small message.
    @Test func aFrameOverWhatAServerTakesIsRefusedBeforeItIsSent() throws {
        let server = try SilentServer()
        let client = try TactusClient(server: server.endpoint, timeout: .milliseconds(200), retries: 0)
        client.patience = .milliseconds(400)
        let recording = [UInt8](repeating: UInt8(ascii: "1"), count: (1 << 20) + 1)
        #expect {
            _ = try client.send(.cadence(CadenceRequest(name: "run.csv"), recording: recording))
        } throws: { error in
            "\(error)" == "cannot send the request: cadence: cannot encode: the binary frame has 1048577 bytes, more than the 1048576 a server takes in one frame"
        }
        #expect(try server.drain().isEmpty)
        #expect(throws: ClientError.self) { _ = try client.cadence(of: recording, name: "run.csv") }
        let sent = try server.drain()
        #expect(sent.count == 1)
        guard let begin = sent.first?.body.request(UploadCommand.self), begin.chunk == nil else {
            Issue.record("not an upload's beginning: \(sent)"); return
        }
        #expect(begin.body.size == Int64(recording.count))
    }

    @Test func repliesAreMatchedByRequestIdAndErrorsCarryTheirCode() throws {
        let song = SongID(hashing: Array("song 1".utf8))
        let jobs = [JobInfo(job: 1, song: song, detector: "comb-filter", state: .queued)]
        let frontend = try FakeFrontend { request in
            // A stale reply to some earlier request first: the client must skip it.
            let stale = ClientReply(requestID: Array("stale".utf8), .status(StatusResponse(jobs: [])))
            guard request.body.request(StatusCommand.self) != nil else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: request.body.command.name,
                    error: ErrorBody(code: .busy, message: "queue full", retryAfterMs: 250))])
            }
            return .init(replies: [stale, ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: jobs)))])
        }
        defer { frontend.stop() }
        let client = try TactusClient(server: frontend.frontend, timeout: .seconds(5))
        #expect(try client.status(song: song).jobs == jobs)
        #expect(throws: ClientError.rejected(ErrorBody(code: .busy, message: "queue full", retryAfterMs: 250))) {
            _ = try client.submit(SubmitRequest(name: "a.wav"), audio: [1, 2, 3])
        }
        let commands = frontend.requests.map { request in request.body.command.name }
        #expect(commands == ["status", "submit"])
    }

    /// A song's `song.done` lists every job of the song, earlier ones included: a batch hands
    /// on only the jobs its own submission got, so an old failure is not this submission's.
    @Test func aBatchCountsOnlyTheJobsOfItsOwnSubmission() throws {
        let frontend = try FakeFrontend { request in
            guard let audio = request.body.request(SubmitCommand.self)?.audio else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: request.body.command.name,
                    error: ErrorBody(code: .unknownCommand, message: "not in this fake"))])
            }
            let song = SongID(hashing: audio)
            let queued = JobInfo(job: 7, song: song, detector: "comb-filter", state: .queued)
            let old = JobInfo(
                job: 3, song: song, detector: "statistical-energy", state: .failed, attempt: 3,
                error: ErrorBody(code: .workerLost, message: "an earlier analysis"))
            var done = queued
            (done.state, done.attempt) = (.done, 1)
            return .init(
                replies: [ClientReply(requestID: request.requestID, .submit(SubmitResponse(song: song, jobs: [queued])))],
                events: [.songDone(SongDoneEvent(
                    song: song, jobs: [old, done], consensus: ConsensusTempo(bpm: 120, detectors: ["comb-filter"])))])
        }
        defer { frontend.stop() }
        let client = try TactusClient(server: frontend.frontend, timeout: .seconds(5))
        let finished = Locked<[SongBatch.Finished]>([])
        let batch = try SongBatch(client: client, events: frontend.events, finished: { done in finished.withLock { $0.append(done) } })
        _ = try batch.submit(SubmitRequest(name: "a.wav", detectors: ["comb-filter"]), audio: [1, 2, 3], label: "a.wav")
        try batch.waitForAll()
        let songs = finished.withLock { $0 }
        #expect(songs.count == 1)
        #expect(songs.first?.jobs.map(\.job) == [7], "\(songs)")
        #expect(songs.first?.labels == ["a.wav"])
    }

    @Test func eventsEndpointIsTheFrontendsHostWithThePortPlusTwo() {
        #expect(CoordinatorEndpoints.events(forFrontend: "tcp://127.0.0.1:5555") == "tcp://127.0.0.1:5557")
        #expect(CoordinatorEndpoints.events(forFrontend: "tcp://music.example.org:7000") == "tcp://music.example.org:7002")
        #expect(CoordinatorEndpoints.events(forFrontend: "tcp://[::1]:9000") == "tcp://[::1]:9002")
        #expect(CoordinatorEndpoints.events(forFrontend: "ipc:///tmp/tactus") == nil)
        #expect(CoordinatorEndpoints.events(forFrontend: "tcp://host:65535") == nil)
    }
}
