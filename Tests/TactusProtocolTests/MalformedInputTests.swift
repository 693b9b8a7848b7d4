import Foundation
import Testing
import TactusDetector
import TactusProtocol

/// Frames of a client request, written by hand as a stranger's client might.
private func request(_ command: String, _ body: String, id: String = "id-1", version: String = "TACTUS1", extra: [[UInt8]] = []) -> [[UInt8]] {
    [Array(version.utf8), Array(command.utf8), Array(id.utf8), Array(body.utf8)] + extra
}

private func rejection(_ frames: [[UInt8]], limits: ProtocolLimits = .standard) -> RequestRejection? {
    do {
        let decoded = try ClientRequest(frames: frames, limits: limits)
        Issue.record("decoded \(decoded) from malformed frames")
        return nil
    } catch {
        return error
    }
}

private func workerError(_ frames: [[UInt8]], limits: ProtocolLimits = .standard) -> ProtocolError? {
    do {
        let decoded = try WorkerMessage(frames: frames, limits: limits)
        Issue.record("decoded \(decoded) from malformed frames")
        return nil
    } catch {
        return error
    }
}

@Suite("Malformed input") struct MalformedInputTests {
    @Test func missingFramesAreCountedAndTheRequestIDIsKeptWhenThereIsOne() throws {
        let short = try #require(rejection([Array("TACTUS1".utf8), Array("status".utf8), Array("id-9".utf8)]))
        #expect(short.error == .missingFrames(message: "client request", expected: 4, received: 3))
        #expect(short.command == "status" && short.requestID == Array("id-9".utf8))
        let empty = try #require(rejection([]))
        #expect(empty.command.isEmpty && empty.requestID.isEmpty)
        #expect(short.reply.outcome == .error(ErrorBody(code: .badRequest, message: short.error.description)))

        let noAudio = try #require(rejection(request("submit", #"{"name":"a.wav"}"#)))
        #expect(noAudio.requestID == Array("id-1".utf8) && noAudio.command == "submit")
        guard case .invalidFrame(command: "submit", frame: "audio", _) = noAudio.error else {
            Issue.record("expected an audio frame error, got \(noAudio.error)")
            return
        }
        let pathAndAudio = try #require(rejection(request("submit", #"{"path":"/music/a.wav"}"#, extra: [[1, 2, 3]])))
        #expect(pathAndAudio.error.code == .badRequest)
        let twoAudio = try #require(rejection(request("submit", "{}", extra: [[1], [2]])))
        #expect(twoAudio.error.code == .badRequest)
        let trailing = try #require(rejection(request("status", "{}", extra: [[0]])))
        #expect(trailing.error.description.contains("at most 0 binary"))

        #expect(throws: ProtocolError.missingFrames(message: "routed client message", expected: 1, received: 0)) {
            try ClientEnvelope.split([])
        }
    }

    @Test(arguments: [
        "{not json", "[1, 2]", "", "   ", "\"text\"", "{\"job\": 1", "null",
    ])
    func bodiesThatAreNotJSONObjectsAreRejected(body: String) throws {
        let rejected = try #require(rejection(request("status", body)))
        guard case .invalidJSON(command: "status", _) = rejected.error else {
            Issue.record("expected invalid JSON, got \(rejected.error)")
            return
        }
        #expect(rejected.reply.outcome == .error(ErrorBody(code: .badRequest, message: rejected.error.description)))
    }

    @Test func bodiesThatAreNotUTF8AreRejected() throws {
        let frames = [Array("TACTUS1".utf8), Array("status".utf8), [], [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]]
        let rejected = try #require(rejection(frames))
        #expect(rejected.error.code == .badRequest)
    }

    @Test(arguments: [
        (#"{"min_bpm":"fast","max_bpm":130}"#, "query", "min_bpm", "expected a number"),
        (#"{"min_bpm":120}"#, "query", "max_bpm", "missing"),
        (#"{"min_bpm":130,"max_bpm":120}"#, "query", "max_bpm", "must be a number in 130.0...1000.0"),
        (#"{"min_bpm":0.5,"max_bpm":120}"#, "query", "min_bpm", "must be a number in 1.0...1000.0"),
        (#"{"min_bpm":120,"max_bpm":130,"limit":-1}"#, "query", "limit", "must be 0 to 10000"),
        (#"{"min_bpm":120,"max_bpm":130,"limit":10001}"#, "query", "limit", "must be 0 to 10000"),
        (#"{"min_bpm":120,"max_bpm":130,"offset":-5}"#, "query", "offset", "must not be negative"),
        (#"{"min_bpm":120,"max_bpm":130,"agree":0}"#, "query", "agree", "1 to 64"),
        (#"{"min_bpm":120,"max_bpm":130,"detector":"comb-filter","agree":2}"#, "query", "agree", "not both"),
        (#"{"min_bpm":120,"max_bpm":130,"order":"random"}"#, "query", "order", "one of closeness, bpm"),
        (#"{"min_bpm":120,"max_bpm":130,"octave":"yes"}"#, "query", "octave", "true or false"),
        (#"{"min_bpm":120,"max_bpm":130,"order":"TITLE"}"#, "query", "order", "title, artist, duration, confidence, agreement"),
        (#"{"min_bpm":120,"max_bpm":130,"descending":1}"#, "query", "descending", "true or false"),
        (#"{"min_bpm":120,"max_bpm":130,"detector":"comb-filter","order":"agreement"}"#, "query", "order", "not with detector"),
        (#"{"min_bpm":120,"max_bpm":130,"histogram":0}"#, "query", "histogram", "must be a number in 0.1...1000.0"),
        (#"{"min_bpm":120,"max_bpm":130,"histogram":"5"}"#, "query", "histogram", "expected a number"),
        (#"{"song":"../../etc/passwd"}"#, "compare", "song", "a song id is"),
        (#"{"song":["ab"]}"#, "compare", "song", "expected a string"),
        (#"{"minutes":30}"#, "playlist", "cadence", "exactly one of cadence and profile"),
        (#"{"cadence":170,"profile":"10m@170"}"#, "playlist", "cadence", "exactly one of cadence and profile"),
        (#"{"cadence":170,"tolerance":0.5}"#, "playlist", "tolerance", "must be a number in 0.001...0.49"),
        (#"{"cadence":170,"minutes":0}"#, "playlist", "minutes", "must be a number in 0.01...100000.0"),
        (#"{"profile":""}"#, "playlist", "profile", "1 to 4096 bytes"),
        (#"{"cadence":170,"detector":"Comb"}"#, "playlist", "detector", "a detector name"),
        (#"{"job":"42"}"#, "status", "job", "expected an integer"),
        (#"{"job":-3}"#, "status", "job", "must be at least 1"),
        (#"{"song":"../../etc/passwd"}"#, "result", "song", "a song id is"),
        (#"{"song":null}"#, "result", "song", ""),
        (#"{"song":"ab","detectors":"comb-filter"}"#, "result", "detectors", "expected an array"),
        (#"{"song":"ab","detectors":["Comb Filter"]}"#, "result", "detectors[0]", "a detector name"),
        (#"{"job":1,"song":"ab"}"#, "cancel", "job", "exactly one"),
        (#"{"detectors":[1]}"#, "submit", "detectors[0]", "expected a string"),
        (#"{"params":{"comb-filter":{"bands":1e300}}}"#, "submit", "params.comb-filter.bands", "at most 2^53"),
        (#"{"params":{"comb-filter":{"bands":{"a":1}}}}"#, "submit", "params.comb-filter.bands", ""),
        (#"{"song":"ab","bpm":"120"}"#, "truth", "bpm", "expected a number"),
        (#"{"song":"ab","bpm":0}"#, "truth", "bpm", "must be a number in 1.0...1000.0"),
        (#"{"bpm":120}"#, "truth", "song", "missing"),
    ])
    func wrongTypesAndValuesNameTheField(body: String, command: String, field: String, detail: String) throws {
        let rejected = try #require(rejection(request(command, body, extra: command == "submit" ? [[1, 2]] : [])))
        guard case .invalidBody(let reportedCommand, let reportedField, let reportedDetail) = rejected.error else {
            Issue.record("expected a field error for \(body), got \(String(describing: rejected.error))")
            return
        }
        #expect(reportedCommand == command)
        #expect(reportedField == field)
        #expect(detail.isEmpty || reportedDetail.contains(detail), "\(reportedDetail)")
        #expect(rejected.error.code == .badRequest)
    }

    @Test func numbersThatDoNotFitTheirFieldAreBadRequests() {
        #expect(rejection(request("status", #"{"job":4.5}"#))?.error.code == .badRequest)
        #expect(rejection(request("status", #"{"job":1e30}"#))?.error.code == .badRequest)
        #expect(rejection(request("query", #"{"min_bpm":1e999,"max_bpm":2}"#))?.error.code == .badRequest)
    }

    /// Names and ids are shown in tables and logs: their lengths are bounded.
    @Test func songNamesAndWorkerIdsHaveBoundedLengths() throws {
        let long = String(repeating: "n", count: SubmitRequest.maxNameBytes + 1)
        #expect(rejection(request("submit", #"{"name":"\#(long)"}"#, extra: [[1]]))?.error.code == .badRequest)
        try SubmitRequest(name: String(long.dropLast())).validate(command: "submit")
        let descriptor = DetectorDescriptor(name: "x", version: "1", summary: "a test", specific: [])
        let ready = ReadyBody(
            workerId: String(repeating: "w", count: 129), detector: DetectorInfo(descriptor), params: try descriptor.resolve())
        #expect(throws: ProtocolError.self) { try ready.validate(command: "READY") }
    }

    /// A worker's declaration is bounded (the coordinator holds every one and lists them all in
    /// `detectors`): a summary over 1 KiB, or a declaration over 64 KiB of JSON, is refused,
    /// naming the field (the built-in detectors' declarations, 2 to 6 KiB, join in every server test).
    @Test func detectorDeclarationsAreBounded() throws {
        let long = DetectorInfo(DetectorDescriptor(name: "x", version: "1", summary: String(repeating: "s", count: 1025), specific: []))
        #expect(throws: ProtocolError.invalidBody(command: "READY", field: "detector.summary", detail: "must have at most 1024 bytes")) {
            try long.validate(command: "READY")
        }
        let grid = (1...4096).map(Double.init)
        let numbers = (0..<8).map { index in
            ParameterSpec("p\(index)", .increasingNumbers(range: 0...5000, count: 1...4096), default: .numbers(grid), summary: "")
        }
        let large = DetectorInfo(DetectorDescriptor(name: "x", version: "1", summary: "large", specific: numbers))
        do {
            try large.validate(command: "READY")
            Issue.record("a declaration of 8 x 4096 numbers was accepted")
        } catch {
            #expect(error.description.contains("the declaration has"), "\(error)")
        }
    }

    @Test func unknownCommandsAreNamedSafelyInTheReply() throws {
        let rejected = try #require(rejection(request("explode", "{}")))
        #expect(rejected.error == .unknownCommand(received: "explode", known: ClientCommands.standard.names))
        let reply = rejected.reply
        #expect(reply.command == "explode" && reply.requestID == Array("id-1".utf8))
        guard case .error(let body) = reply.outcome else { return }
        #expect(body.code == .unknownCommand)

        // Binary garbage is escaped and cut short, never echoed raw.
        let garbage: [UInt8] = [0xFF, 0x00, 0x0A] + Array(repeating: 0x41, count: 100)
        let rejectedGarbage = try #require(rejection([Array("TACTUS1".utf8), garbage, [], Array("{}".utf8)]))
        #expect(rejectedGarbage.command.hasPrefix("\\xFF\\x00\\x0AAAA"))
        #expect(rejectedGarbage.command.utf8.count <= 35 && rejectedGarbage.command.hasSuffix("…"))
        // The client can read that rejection, and match it by its request id.
        let garbageReply = try ClientReply(frames: rejectedGarbage.reply.frames())
        #expect(garbageReply.command == rejectedGarbage.command && garbageReply.requestID.isEmpty)
        // Commands are case-sensitive.
        #expect(rejection(request("SUBMIT", "{}"))?.error.code == .unknownCommand)
        #expect(workerError([Array("TACTUS1".utf8), Array("JOB".utf8), Array("{}".utf8), []])?.code == .unknownCommand)
    }

    @Test func anUnknownVersionIsAnsweredWithTheSupportedVersions() throws {
        let rejected = try #require(rejection(request("status", "{}", version: "TACTUS3")))
        #expect(rejected.error == .unsupportedVersion(received: "TACTUS3", supported: ["TACTUS1", "TACTUS2"]))
        #expect(rejected.command == "status" && rejected.requestID == Array("id-1".utf8))
        let frames = try rejected.reply.frames()
        #expect(frames[0] == Array("TACTUS1".utf8))
        let reply = try ClientReply(frames: frames)
        guard case .error(let body) = reply.outcome else {
            Issue.record("not an error reply")
            return
        }
        #expect(body.code == .unsupportedVersion)
        #expect(body.supportedVersions == ["TACTUS1", "TACTUS2"])
        // Version 2 changed only the backend: a client's request in either version is read.
        _ = try ClientRequest(frames: request("status", "{}", version: "TACTUS2"))

        #expect(rejection(request("status", "{}", version: "TACTUS"))?.error.code == .unsupportedVersion)
        #expect(rejection(request("status", "{}", version: "MDPC01"))?.error == .notTactus(received: "MDPC01"))
        #expect(rejection(request("status", "{}", version: ""))?.error.code == .badRequest)
        #expect(workerError([Array("TACTUS9".utf8), Array("READY".utf8), Array("{}".utf8)])
            == .unsupportedVersion(received: "TACTUS9", supported: ["TACTUS1", "TACTUS2"]))
    }

    @Test func oversizedFramesAndMessagesAreTooLarge() throws {
        let limits = ProtocolLimits(maxFrames: 6, maxBodyBytes: 64, maxAudioBytes: 100, maxFloatArrayBytes: 8, maxRequestIDBytes: 4)
        let bigBody = "{\"song\":\"" + String(repeating: "a", count: 100) + "\"}"
        #expect(rejection(request("result", bigBody), limits: limits)?.error == .frameTooLarge(frame: "body", size: bigBody.utf8.count, limit: 64))
        #expect(rejection(request("submit", "{}", extra: [[UInt8](repeating: 0, count: 101)]), limits: limits)?.error
            == .frameTooLarge(frame: "audio", size: 101, limit: 100))
        #expect(rejection(request("status", "{}", id: "12345"), limits: limits)?.error.code == .tooLarge)
        let manyFrames = request("status", "{}", extra: [[], [], []])
        #expect(rejection(manyFrames, limits: limits)?.error == .tooManyFrames(message: "client request", limit: 6, received: 7))

        let result = ResultBody(job: 1, attempt: 1, analysis: Examples.analysis, audio: nil, envelopeHopS: 0.02)
        var frames = try WorkerMessage.result(result, envelope: [1, 2, 3]).frames()
        let roomy = ProtocolLimits(maxFloatArrayBytes: 8)
        #expect(workerError(frames, limits: roomy) == .frameTooLarge(frame: "envelope", size: 12, limit: 8))
        frames[3] = []
        #expect(try WorkerMessage(frames: frames, limits: roomy) == .result(result, envelope: []))
        #expect(ProtocolLimits.standard.maxFrameBytes == 512 << 20)
    }

    @Test(arguments: [1, 2, 3, 5, 7, 4099])
    func floatArraysWhoseSizeIsNotAMultipleOfFourAreRejected(size: Int) throws {
        #expect(throws: ProtocolError.self) { try Float32Frame.decode([UInt8](repeating: 0, count: size)) }
        let result = ResultBody(job: 1, attempt: 1, analysis: Examples.analysis, audio: nil, envelopeHopS: 0.02)
        var frames = try WorkerMessage.result(result, envelope: [0]).frames()
        frames[3] = [UInt8](repeating: 0, count: size)
        guard case .invalidFrame(command: "RESULT", frame: "envelope", let detail)? = workerError(frames) else {
            Issue.record("expected an envelope frame error")
            return
        }
        #expect(detail.contains("\(size) bytes"))
    }

    @Test func nonFiniteFloatsAndMissingEnvelopesAreRejected() throws {
        #expect(throws: ProtocolError.self) { try Float32Frame.decode(Float32Frame.encode([1, .nan])) }
        #expect(throws: ProtocolError.self) { try Float32Frame.decode(Float32Frame.encode([.infinity])) }
        let result = ResultBody(job: 1, attempt: 1, analysis: Examples.analysis, audio: nil, envelopeHopS: 0.02)
        let frames = try WorkerMessage.result(result, envelope: [0]).frames()
        #expect(workerError(Array(frames.prefix(3)))?.code == .badRequest)
    }

    @Test func workerBodiesAreCheckedForConsistency() throws {
        func ready(_ body: String) -> [[UInt8]] { [Array("TACTUS1".utf8), Array("READY".utf8), Array(body.utf8)] }
        func readyError(mutating mutate: (inout [String: Any]) -> Void) throws -> ProtocolError? {
            let frames = try WorkerMessage.ready(Examples.ready).frames()
            var object = try #require(try JSONSerialization.jsonObject(with: Data(frames[2])) as? [String: Any])
            mutate(&object)
            return workerError([frames[0], frames[1], Array(try JSONSerialization.data(withJSONObject: object))])
        }
        func mutateParameter(_ index: Int, _ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { object in
                var detector = object["detector"] as! [String: Any]
                var parameters = detector["parameters"] as! [[String: Any]]
                parameters[index][key] = value
                detector["parameters"] = parameters
                object["detector"] = detector
            }
        }
        // An integer parameter with an enormous default must be refused, not trap.
        #expect(try readyError(mutating: mutateParameter(3, "default", 1e300))?.code == .badRequest)
        #expect(try readyError(mutating: mutateParameter(3, "min", 20))?.code == .badRequest)  // min > max
        #expect(try readyError(mutating: mutateParameter(3, "kind", "complex"))?.code == .badRequest)
        #expect(try readyError(mutating: mutateParameter(1, "default", 10))?.code == .badRequest)  // out of range
        #expect(try readyError(mutating: mutateParameter(1, "min", 30))?.code == .badRequest)  // not the standard min_bpm
        #expect(try readyError { object in
            var detector = object["detector"] as! [String: Any]
            detector["parameters"] = Array((detector["parameters"] as! [[String: Any]]).dropFirst())
            object["detector"] = detector
        }?.code == .badRequest)
        #expect(try readyError { $0["worker_id"] = "" }?.code == .badRequest)
        // Summaries of the common parameters are the worker's own business.
        var renamed = Examples.ready
        renamed.detector.parameters[1].summary = "slowest tempo"
        #expect(try WorkerMessage(frames: WorkerMessage.ready(renamed).frames()) == .ready(renamed))
        #expect(workerError(ready("{}")) == .invalidBody(command: "READY", field: "worker_id", detail: "missing"))

        let both = #"{"job":1,"attempt":1,"error":{"code":"corrupt","message":"x"},"analysis":null}"#
        _ = try WorkerMessage(frames: [Array("TACTUS1".utf8), Array("RESULT".utf8), Array(both.utf8)])
        let neither = #"{"job":1,"attempt":1}"#
        #expect(workerError([Array("TACTUS1".utf8), Array("RESULT".utf8), Array(neither.utf8)])?.code == .badRequest)
        let attemptZero = #"{"job":1,"attempt":0,"error":{"code":"corrupt","message":"x"}}"#
        #expect(workerError([Array("TACTUS1".utf8), Array("RESULT".utf8), Array(attemptZero.utf8)])
            == .invalidBody(command: "RESULT", field: "attempt", detail: "must be at least 1"))
        let badCode = #"{"job":1,"attempt":1,"error":{"code":"Not A Code","message":"x"}}"#
        #expect(workerError([Array("TACTUS1".utf8), Array("RESULT".utf8), Array(badCode.utf8)])?.code == .badRequest)
        let futureCode = #"{"job":1,"attempt":1,"error":{"code":"new-in-v1-1","message":"x","hint":"ignored"}}"#
        _ = try WorkerMessage(frames: [Array("TACTUS1".utf8), Array("RESULT".utf8), Array(futureCode.utf8)])
    }

    /// A worker's beat grid out of range (a first beat beyond one beat, a tempo of 0) or sent
    /// with no analysis is refused, naming `beat_grid`.
    @Test func aSongResultsBeatGridOutOfRangeIsRefused() throws {
        let song = Examples.song
        func songResult(_ grid: String, analysis: Bool = true) -> [[UInt8]] {
            let answer = analysis
                ? #"{"job":1,"attempt":1,"analysis":"# + String(decoding: try! JSONEncoder().encode(Examples.analysis), as: UTF8.self) + "}"
                : #"{"job":1,"attempt":1,"error":{"code":"corrupt","message":"x"}}"#
            let body = #"{"song":"\#(song)","results":[\#(answer)],"beat_grid":\#(grid)}"#
            return [Array("TACTUS2".utf8), Array("RESULT".utf8), Array(body.utf8)]
        }
        let good = #"{"kind":"constant","bpm":120,"first_beat_s":0.2,"clarity":3}"#
        _ = try WorkerMessage(frames: songResult(good))
        for bad in [
            #"{"kind":"constant","bpm":120,"first_beat_s":0.6,"clarity":3}"#,
            #"{"kind":"constant","bpm":0,"first_beat_s":0.1,"clarity":3}"#,
            #"{"kind":"constant","bpm":120,"first_beat_s":0.1,"clarity":-1}"#,
        ] {
            guard case .invalidBody(command: "RESULT", field: "beat_grid", _)? = workerError(songResult(bad)) else {
                Issue.record("\(bad) was not refused as beat_grid")
                continue
            }
        }
        #expect(workerError(songResult(#"{"kind":"tracked","bpm":120,"first_beat_s":0.1,"clarity":3}"#))?.code == .badRequest)
        guard case .invalidBody(command: "RESULT", field: "beat_grid", _)? = workerError(songResult(good, analysis: false)) else {
            Issue.record("a grid without an analysis was not refused")
            return
        }
    }

    /// A worker's audio facts beyond what any decoder reports (a duration of 10^300 s, negative,
    /// over 10^6 s; a sample rate of 0) are refused, naming the field, in both versions: a
    /// stored duration that large trapped every integer computed from it (a render's size, the
    /// web page's clock, the rekordbox TotalTime, a grid's beats).
    @Test func aResultsAudioFactsOutOfRangeAreRefused() throws {
        let analysis = String(decoding: try JSONEncoder().encode(Examples.analysis), as: UTF8.self)
        func audio(duration: String, rate: String = "22050") -> String {
            #"{"format":"wav","duration_s":\#(duration),"sample_rate":\#(rate),"channels":1}"#
        }
        func version1(_ audio: String) -> [[UInt8]] {
            let body = #"{"job":1,"attempt":1,"analysis":\#(analysis),"audio":\#(audio)}"#
            return [Array("TACTUS1".utf8), Array("RESULT".utf8), Array(body.utf8)]
        }
        func version2(_ audio: String) -> [[UInt8]] {
            let body = #"{"song":"\#(Examples.song)","audio":\#(audio),"results":[{"job":1,"attempt":1,"analysis":\#(analysis)}]}"#
            return [Array("TACTUS2".utf8), Array("RESULT".utf8), Array(body.utf8)]
        }
        _ = try WorkerMessage(frames: version1(audio(duration: "7200")))
        _ = try WorkerMessage(frames: version2(audio(duration: "1000000")))
        for (facts, field) in [
            (audio(duration: "1e300"), "audio.duration_s"), (audio(duration: "-1"), "audio.duration_s"),
            (audio(duration: "1000001"), "audio.duration_s"), (audio(duration: "60", rate: "0"), "audio.sample_rate"),
        ] {
            for frames in [version1(facts), version2(facts)] {
                guard case .invalidBody(command: "RESULT", field: field, _)? = workerError(frames) else {
                    Issue.record("\(facts) was not refused as \(field)")
                    continue
                }
            }
        }
    }

    @Test func aJobWithoutItsAudioFrameIsRejected() throws {
        let frames = try CoordinatorMessage.job(Examples.job, audio: Examples.audio).frames()
        #expect(throws: ProtocolError.self) { try CoordinatorMessage(frames: Array(frames.prefix(3))) }
        #expect(throws: ProtocolError.self) { try CoordinatorMessage(frames: frames + [[]]) }
    }

    @Test func eventsWhoseTopicDoesNotMatchTheirSongAreRejected() throws {
        var frames = try Examples.events[0].frames()
        frames[0] = Array("another-song".utf8)
        #expect(throws: ProtocolError.self) { try Event(frames: frames) }
    }

    @Test func messagesThatCannotBeEncodedSayWhy() throws {
        var analysis = Examples.analysis
        analysis.confidence = .nan
        let message = WorkerMessage.result(ResultBody(job: 1, attempt: 1, analysis: analysis, audio: nil), envelope: nil)
        let error = encodingError { () throws(ProtocolError) in try message.frames() }
        guard case .unencodable(command: "RESULT", let detail)? = error else {
            Issue.record("expected an encoding error")
            return
        }
        #expect(detail.contains("confidence"))
        let contradictory = ClientRequest(.submit(SubmitRequest(path: "/a.wav"), audio: [1]))
        #expect(encodingError { () throws(ProtocolError) in try contradictory.frames() }?.code == .internal)
    }

    @Test func deeplyNestedJSONIsRejectedWithoutCrashing() throws {
        let deep = "{\"params\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(rejection(request("submit", deep, extra: [[1]]))?.error.code == .badRequest)
    }

    private func encodingError(_ body: () throws(ProtocolError) -> [[UInt8]]) -> ProtocolError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }
}

@Suite("Messages written by hand") struct HandWrittenMessageTests {
    /// The READY of SPEC.md's pyzmq worker example, as a stranger would write it.
    @Test func theSpecificationsExampleWorkerIsAccepted() throws {
        let body = #"""
            {"worker_id": "myhost-4242-x1", "params": {"preset": "default", "min_bpm": 60, "max_bpm": 200},
             "detector": {"name": "my-detector", "version": "1.0", "summary": "...", "parameters": [
                {"name": "preset", "kind": "choice", "choices": ["default"], "default": "default", "presets": {}, "summary": "..."},
                {"name": "min_bpm", "kind": "number", "min": 20, "max": 400, "default": 60, "presets": {}, "summary": "..."},
                {"name": "max_bpm", "kind": "number", "min": 20, "max": 400, "default": 200, "presets": {}, "summary": "..."}]}}
            """#
        let message = try WorkerMessage(frames: [Array("TACTUS1".utf8), Array("READY".utf8), Array(body.utf8)])
        guard case .ready(let ready) = message else {
            Issue.record("not a READY")
            return
        }
        let descriptor = try ready.detector.descriptor()
        #expect(descriptor.name == "my-detector" && descriptor.parameters.count == 3)
        #expect(try descriptor.resolve(ParameterSet(["min_bpm": .number(80)])).number("min_bpm") == 80)
    }

    /// The library requests of SPEC.md's pyzmq example (section 3.5), as `json.dumps` writes them.
    @Test func theSpecificationsExampleLibraryRequestsAreAccepted() throws {
        func decoded(_ command: String, _ body: String) throws -> ClientRequest.Body {
            let frames = [Array("peer".utf8), [], Array("TACTUS1".utf8), Array(command.utf8), [], Array(body.utf8)]
            return try ClientRequest(frames: try ClientEnvelope.split(frames).1).body
        }
        #expect(
            try decoded("query", #"{"min_bpm": 165, "max_bpm": 175, "octave": true, "limit": 20}"#)
                == .query(QueryRequest(minBpm: 165, maxBpm: 175, octave: true, limit: 20)))
        guard let playlist = try decoded("playlist", #"{"profile": "10m@150,5m@170"}"#).request(PlaylistCommand.self) else {
            Issue.record("not a playlist request")
            return
        }
        #expect(try playlist.playlistRequest().profile.segments.map(\.durationS) == [600, 300])
        #expect(try decoded("truth", #"{"song": "3f9a3f9a", "bpm": 128}"#) == .truth(TruthRequest(song: "3f9a3f9a", bpm: 128)))
        #expect(try decoded("compare", #"{"song": "3f9a3f9a"}"#) == .compare(CompareRequest(song: "3f9a3f9a")))
        #expect(try decoded("compare", "{}") == .compare(CompareRequest()))
    }

    /// The submit of SPEC.md's pyzmq client example.
    @Test func theSpecificationsExampleSubmitIsAccepted() throws {
        let frames = [[], Array("TACTUS1".utf8), Array("submit".utf8), Array("req-1".utf8), Array(#"{"name": "song.flac"}"#.utf8), [1, 2, 3]]
        let (envelope, message) = try ClientEnvelope.split([Array("peer".utf8)] + frames)
        #expect(envelope.delimited)
        #expect(try ClientRequest(frames: message) == ClientRequest(requestID: Array("req-1".utf8), .submit(SubmitRequest(name: "song.flac"), audio: [1, 2, 3])))
    }
}
