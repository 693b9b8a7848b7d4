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
            #expect(envelope == ClientEnvelope(routingID: [0, 0x80, 0, 0x41, 0xA7], delimited: delimited, version: .v1))
            #expect(message[0] == Array("TACTUS1".utf8))
            #expect(message[1] == Array(request.body.command.name.utf8))
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

    @Test func aReplyEchoesTheVersionOfItsRequest() throws {
        let request = try ClientRequest(requestID: Array("r-1".utf8), .detectors).frames()
        var asVersion2 = request
        asVersion2[0] = Array("TACTUS2".utf8)
        let (envelope, message) = try ClientEnvelope.split([[7]] + asVersion2)
        #expect(envelope.version == .v2)
        #expect(try ClientRequest(frames: message).body == .detectors)
        let reply = envelope.wrap(try ClientReply(requestID: Array("r-1".utf8), command: "detectors", error: Examples.error).frames())
        #expect(reply[1] == Array("TACTUS2".utf8))
        let (plain, _) = try ClientEnvelope.split([[7]] + request)
        #expect(plain.wrap(try ClientReply(requestID: [], command: "detectors", error: Examples.error).frames())[1] == Array("TACTUS1".utf8))
    }

    @Test(arguments: Examples.workerMessages)
    func everyWorkerMessageRoundTrips(message: WorkerMessage) throws {
        // Version-1 bodies go out as TACTUS1, version-2 bodies as TACTUS2, the others in the
        // version of the connection.
        for version in ProtocolVersion.supported {
            let frames = try message.frames(version: version)
            let expected = message.requiredVersion ?? version
            #expect(frames[0] == expected.frame && frames[1] == Array(message.command.rawValue.utf8))
            let decoded = try WorkerMessage.decode(frames)
            #expect(decoded.message == message && decoded.version == expected)
        }
    }

    @Test(arguments: Examples.coordinatorMessages)
    func everyCoordinatorMessageRoundTrips(message: CoordinatorMessage) throws {
        for version in ProtocolVersion.supported {
            let frames = try message.frames(version: version)
            #expect(frames[0] == (message.requiredVersion ?? version).frame)
            #expect(try CoordinatorMessage(frames: frames) == message)
        }
    }

    @Test func aVersion1BodyUnderTheVersion2IdentifierIsRefused() throws {
        // A READY of version 1 sent as TACTUS2 lacks the detectors list: bad-request, not a
        // worker offering nothing.
        var frames = try Examples.workerMessages[0].frames()
        frames[0] = ProtocolVersion.v2.frame
        #expect(throws: ProtocolError.self) { try WorkerMessage(frames: frames) }
        var job = try CoordinatorMessage.job(Examples.job, audio: Examples.audio).frames()
        job[0] = ProtocolVersion.v2.frame
        #expect(throws: ProtocolError.self) { try CoordinatorMessage(frames: job) }
    }

    @Test(arguments: Examples.events)
    func everyEventRoundTripsWithItsTopicFirst(event: Event) throws {
        let frames = try event.frames()
        #expect(frames[0] == event.topic)
        #expect(try Event(frames: frames) == event)
    }

    @Test func topicsAreSongIdsOrWorkerPrefixes() {
        #expect(Examples.events[0].topic == Array(Examples.song.hex.utf8))
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
        #expect(ProtocolVersion.current.identifier == "TACTUS2")
        #expect(ProtocolVersion.supported == [ProtocolVersion(1), ProtocolVersion(2)])
        #expect(ProtocolVersion.frontend.identifier == "TACTUS1")
        #expect(ProtocolVersion(1) < ProtocolVersion(2))
    }
}
