import Testing
import TactusDetector
import TactusProtocol

@Suite("Round trips") struct RoundTripTests {
    @Test(arguments: Examples.requests)
    func everyRequestSurvivesEncodingAndTheRouterEnvelope(request: ClientRequest) throws {
        for delimited in [false, true] {
            // What the frontend ROUTER hands the coordinator: the routing id, then the client's frames.
            let received = [[0, 0x80, 0, 0x41, 0xA7]] + (try request.frames(delimited: delimited))
            let (envelope, message) = try ClientEnvelope.split(received)
            #expect(envelope == ClientEnvelope(routingID: [0, 0x80, 0, 0x41, 0xA7], delimited: delimited))
            #expect(message[0] == Array("TACTUS1".utf8))
            #expect(message[1] == Array(request.body.command.rawValue.utf8))
            #expect(try ClientRequest(frames: message) == request)
        }
    }

    @Test(arguments: Examples.responses)
    func everyReplySurvivesEncodingThroughADealerOrAREQ(response: ClientReply.Response) throws {
        let reply = ClientReply(requestID: Array("r-17".utf8), response)
        let envelope = ClientEnvelope(routingID: [1, 2, 3], delimited: true)
        let sent = envelope.wrap(try reply.frames())
        #expect(sent.prefix(2) == [[1, 2, 3], []])
        // A DEALER receives the delimiter; a REQ socket strips it.
        #expect(try ClientReply(frames: Array(sent.dropFirst())) == reply)
        #expect(try ClientReply(frames: Array(sent.dropFirst(2))) == reply)
    }

    @Test func errorRepliesCarryTheirCodeAndDetails() throws {
        let reply = ClientReply(requestID: [9], command: "submit", error: Examples.error)
        let frames = try reply.frames()
        #expect(frames[3] == Array("error".utf8))
        #expect(String(decoding: frames[4], as: UTF8.self) == #"{"code":"busy","message":"the queue is full (10000 jobs)","retry_after_ms":1500}"#)
        #expect(try ClientReply(frames: frames) == reply)
    }

    @Test(arguments: Examples.workerMessages)
    func everyWorkerMessageRoundTrips(message: WorkerMessage) throws {
        let frames = try message.frames()
        #expect(frames[0] == Array("TACTUS1".utf8) && frames[1] == Array(message.command.rawValue.utf8))
        #expect(try WorkerMessage(frames: frames) == message)
    }

    @Test(arguments: Examples.coordinatorMessages)
    func everyCoordinatorMessageRoundTrips(message: CoordinatorMessage) throws {
        #expect(try CoordinatorMessage(frames: message.frames()) == message)
    }

    @Test(arguments: Examples.events)
    func everyEventRoundTripsWithItsTopicFirst(event: Event) throws {
        let frames = try event.frames()
        #expect(frames[0] == event.topic)
        #expect(try Event(frames: frames) == event)
    }

    @Test func topicsAreSongIdsOrWorkerPrefixes() {
        #expect(Examples.events[0].topic == Array(Examples.song.utf8))
        #expect(Examples.events[4].topic == Array("worker:comb-filter".utf8))
    }

    @Test func bodiesUseTheCLIsSnakeCaseNames() throws {
        let frames = try WorkerMessage.result(
            ResultBody(job: 1, attempt: 1, analysis: Examples.analysis, audio: nil), envelope: nil
        ).frames()
        let json = String(decoding: frames[2], as: UTF8.self)
        for key in [#""start_s":0"#, #""duration_s":5.9"#, #""bpm":null"#, #""candidates":["#, #""confidence":0.83"#, #""windows":["#] {
            #expect(json.contains(key), "\(key) in \(json)")
        }
    }

    @Test func aDescriptorSurvivesTheWireExactly() throws {
        let info = DetectorInfo(Examples.descriptor)
        #expect(info.parameters.map(\.name) == ["preset", "min_bpm", "max_bpm", "bands", "band_edges", "smoothing"])
        #expect(info.parameters[3].kind == "integer" && info.parameters[4].kind == "numbers")
        let descriptor = try info.descriptor()
        #expect(descriptor == Examples.descriptor)
        #expect(try descriptor.resolve(ParameterSet(["bands": .number(8)])).number("bands") == 8)
    }

    @Test func float32FramesAreLittleEndian() throws {
        #expect(Float32Frame.encode([1, -2]) == [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0])
        #expect(try Float32Frame.decode([0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0]) == [1, -2])
        #expect(try Float32Frame.decode([]) == [])
    }

    @Test func theVersionFrameIsTACTUSAndANumber() {
        #expect(ProtocolVersion.current.identifier == "TACTUS1")
        #expect(ProtocolVersion.supported == [ProtocolVersion(1)])
        #expect(ProtocolVersion(1) < ProtocolVersion(2))
    }
}
