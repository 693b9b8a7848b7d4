import Foundation
import Testing
import TactusProtocol
import TactusZMQ

/// The protocol over real sockets: what a REQ client, a DEALER client, a DEALER worker and a SUB
/// subscriber send and receive, with the coordinator's side played by the test.
@Suite("Over sockets") struct OverSocketsTests {
    let context: ZMQContext

    init() throws {
        context = try ZMQContext(socketLinger: .zero)
    }

    /// The coordinator's side of one request: decode, answer `status` with the job asked about.
    private func answer(_ frontend: ZMQSocket) throws -> ClientRequest? {
        let received = try #require(try frontend.receive(timeout: .seconds(2), maxFrames: ProtocolLimits.standard.maxFrames))
        let (envelope, message) = try ClientEnvelope.split(received)
        let request: ClientRequest
        do {
            request = try ClientRequest(frames: message)
        } catch {
            try frontend.send(envelope.wrap(try error.reply.frames()))
            return nil
        }
        guard let status = request.body.request(StatusCommand.self) else { return request }
        let job = JobInfo(job: status.job ?? 1, song: Examples.song, detector: "comb-filter", state: .running, attempt: 1)
        try frontend.send(envelope.wrap(try ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [job]))).frames()))
        return request
    }

    @Test func reqAndDealerClientsGetTheirRepliesThroughTheFrontendRouter() throws {
        let frontend = try context.socket(.router)
        try frontend.set([.routerMandatory(true), .maxMessageSize(ProtocolLimits.standard.maxFrameBytes)])
        try frontend.bind("tcp://127.0.0.1:*")
        let endpoint = try frontend.lastEndpoint

        let req = try context.socket(.req)
        try req.connect(endpoint)
        try req.send(try ClientRequest(requestID: Array("a".utf8), .status(StatusRequest(job: 7))).frames())
        #expect(try answer(frontend)?.requestID == Array("a".utf8))
        let reqReply = try ClientReply(frames: try #require(try req.receive(timeout: .seconds(2))))
        #expect(reqReply.requestID == Array("a".utf8))
        guard let status = reqReply.outcome.answer(StatusCommand.self) else {
            Issue.record("unexpected reply \(reqReply)")
            return
        }
        #expect(status.jobs.first?.job == 7)

        // A DEALER may pipeline requests; the request ids tell the replies apart.
        let dealer = try context.socket(.dealer)
        try dealer.connect(endpoint)
        for (index, job) in [11, 12].enumerated() {
            try dealer.send(try ClientRequest(requestID: [UInt8(index)], .status(StatusRequest(job: Int64(job)))).frames(delimited: true))
        }
        try dealer.send([[], Array("TACTUS3".utf8), Array("status".utf8), [9], Array("{}".utf8)])
        for _ in 0..<3 { _ = try answer(frontend) }
        var replies: [ClientReply] = []
        for _ in 0..<3 { replies.append(try ClientReply(frames: try #require(try dealer.receive(timeout: .seconds(2))))) }
        #expect(replies.map(\.requestID) == [[0], [1], [9]])
        guard case .error(let versionError) = replies[2].outcome else {
            Issue.record("a TACTUS3 request was not refused")
            return
        }
        #expect(versionError.code == .unsupportedVersion && versionError.supportedVersions == ["TACTUS1", "TACTUS2"])
    }

    @Test func aWorkerAndTheBackendExchangeJobsAndResults() throws {
        let backend = try context.socket(.router)
        try backend.set(.routerMandatory(true))
        try backend.bind("tcp://127.0.0.1:*")
        let worker = try context.socket(.dealer)
        try worker.connect(try backend.lastEndpoint)

        try worker.send(try WorkerMessage.ready(Examples.ready).frames())
        let ready = try #require(try backend.receive(timeout: .seconds(2)))
        let routingID = ready[0]
        #expect(try WorkerMessage(frames: Array(ready.dropFirst())) == .ready(Examples.ready))

        try backend.send([routingID] + (try CoordinatorMessage.job(Examples.job, audio: Examples.audio).frames()))
        let job = try CoordinatorMessage(frames: try #require(try worker.receive(timeout: .seconds(2))))
        #expect(job == .job(Examples.job, audio: Examples.audio))

        let result = WorkerMessage.result(
            ResultBody(job: Examples.job.job, attempt: Examples.job.attempt, analysis: Examples.analysis, audio: nil,
                envelopeHopS: 0.0232), envelope: Examples.envelope)
        try worker.send(try result.frames())
        let received = try #require(try backend.receive(timeout: .seconds(2)))
        #expect(received[0] == routingID)
        #expect(try WorkerMessage(frames: Array(received.dropFirst())) == result)
    }

    @Test func subscribersFollowOneSongByItsTopic() throws {
        let publisher = try context.socket(.pub)
        try publisher.bind("tcp://127.0.0.1:*")
        let subscriber = try context.socket(.sub)
        try subscriber.set(.subscribe(Array(Examples.song.hex.utf8)))
        try subscriber.connect(try publisher.lastEndpoint)

        let other = Event.jobDone(JobDoneEvent(job: 1, song: Examples.otherSong, detector: "comb-filter", bpm: 90, confidence: 0.5))
        let wanted = Examples.events[0]
        var received: [Event] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while received.isEmpty && ContinuousClock.now < deadline {
            try publisher.send(try other.frames())
            try publisher.send(try Examples.events[4].frames())  // a worker event: another topic
            try publisher.send(try wanted.frames())
            while let frames = try subscriber.receive(timeout: .milliseconds(20)) { received.append(try Event(frames: frames)) }
        }
        #expect(!received.isEmpty)
        #expect(received.allSatisfy { $0 == wanted })
    }
}
