import Foundation
import TactusAnalysis
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// `tactus worker` offering several detectors: protocol version 2, one decode per song, and
/// the fall back to version 1 for a coordinator that speaks only that.
@Suite struct WorkerSongJobTests {
    static let fastHeartbeats = ["--heartbeat-interval", "0.2"]

    @Test func aWorkerOfSeveralDetectorsAnswersEveryJobOfASongInOneResult() throws {
        let song = try drumWAV(bpm: 120, seconds: 20)
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(
            connect: coordinator.endpoint, arguments: ["--detector", "autocorrelation", "--param", "min_bpm=70"] + Self.fastHeartbeats)
        let received = try #require(try coordinator.receiveSkippingHeartbeats(), "no READY; worker log:\n\(worker.log)")
        guard case .offer(let offer) = received.message else {
            Issue.record("expected a version-2 READY, got \(received.message)")
            return
        }
        #expect(offer.detectors.map(\.detector.name) == ["comb-filter", "autocorrelation"])
        #expect(offer.detectors.allSatisfy { $0.params["min_bpm"] == .number(70) })

        let params = try #require(BuiltinDetectors.registry.descriptor(named: "comb-filter")).resolve()
        let job = SongJobBody(
            song: testSong(7), name: "song-7.wav", timeLimitS: 60, envelope: true,
            jobs: [
                SongJobEntry(job: 7, attempt: 1, detector: "comb-filter", params: params),
                SongJobEntry(job: 8, attempt: 2, detector: "autocorrelation", params: ParameterSet()),
                SongJobEntry(job: 9, attempt: 1, detector: "comb-filter", params: ParameterSet(["max_bpm": .number(900)])),
                SongJobEntry(job: 10, attempt: 1, detector: "statistical-energy", params: ParameterSet()),
            ])
        try coordinator.send(.songJob(job, audio: song), to: received.worker)
        let answer = try #require(try coordinator.receiveSkippingHeartbeats(timeout: .seconds(60)), "no RESULT; log:\n\(worker.log)")
        guard case .songResult(let result, let envelope) = answer.message else {
            Issue.record("expected a version-2 RESULT, got \(answer.message)")
            return
        }
        #expect(result.song == testSong(7) && result.results.map(\.job) == [7, 8, 9, 10])
        #expect(result.results.map(\.attempt) == [1, 2, 1, 1])
        for answer in result.results.prefix(2) {
            let analysis = try #require(answer.analysis, "job \(answer.job): \(String(describing: answer.error))")
            #expect(abs((analysis.bpm ?? 0) - 120) <= 1.2, "job \(answer.job): \(String(describing: analysis.bpm))")
        }
        #expect(result.results[0].analysis?.detector == "comb-filter" && result.results[1].analysis?.detector == "autocorrelation")
        #expect(result.results[2].error?.code == .invalidParameter, "a refused parameter fails its job alone")
        #expect(result.results[3].error?.code == .unknownDetector, "a detector not offered fails its job alone")
        #expect(result.audio?.durationS ?? 0 > 19.9 && result.envelopeHopS != nil && envelope?.isEmpty == false)
    }

    @Test func aCoordinatorOfVersion1AloneGetsTheFirstDetectorInVersion1() throws {
        // Made first: a coordinator busy synthesising would not heartbeat.
        let song = try drumWAV(bpm: 120, seconds: 12)
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(
            connect: coordinator.endpoint, detector: "autocorrelation", arguments: ["--detector", "comb-filter"] + Self.fastHeartbeats)
        let first = try #require(try coordinator.receiveSkippingHeartbeats(), "no READY; worker log:\n\(worker.log)")
        guard case .offer = first.message else {
            Issue.record("expected a version-2 READY, got \(first.message)")
            return
        }
        // What a coordinator of version 1 answers a TACTUS2 message with.
        try coordinator.send(
            .disconnect(DisconnectBody(error: ProtocolError.unsupportedVersion(received: "TACTUS2", supported: ["TACTUS1"]).body)),
            to: first.worker)
        let ready = try #require(try coordinator.awaitReady(timeout: .seconds(10)), "no version-1 READY; log:\n\(worker.log)")
        #expect(ready.body.detector.name == "autocorrelation")
        let result = try #require(try coordinator.run(job(3), audio: song, on: ready.worker), "no RESULT; log:\n\(worker.log)")
        #expect(result.body.analysis?.detector == "autocorrelation")
    }
}
