import Foundation
import TactusAnalysis
import TactusDetector
import TactusProtocol
import TactusZMQ
import Testing

/// A real `tactus worker` process against a fake coordinator made of a real ROUTER socket.
/// Heartbeats are every 0.2 s so that liveness and reconnection take about a second, with
/// room for a loaded machine (3 silent intervals, 0.6 s, make a peer dead).
@Suite struct WorkerProcessTests {
    static let fastHeartbeats = ["--heartbeat-interval", "0.2"]

    @Test func readyAnnouncesTheDetectorItsVersionAndResolvedParameters() throws {
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(
            connect: coordinator.endpoint, arguments: ["--id", "test-worker-1", "--param", "preset=classic"])
        let ready = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")
        let descriptor = try #require(BuiltinDetectors.registry.descriptor(named: "comb-filter"))
        #expect(ready.body.workerId == "test-worker-1")
        #expect(ready.body.detector == DetectorInfo(descriptor))
        #expect(ready.body.params == (try descriptor.resolve(assignments: ["preset=classic"])))
        #expect(ready.body.params["preset"] == .text("classic"))
    }

    @Test func jobsGiveResultsAndABadFileIsAFailedJobNotADeadWorker() throws {
        // Songs are made first: a coordinator busy synthesising would not heartbeat.
        let song = try drumWAV(bpm: 120, seconds: 20)
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(connect: coordinator.endpoint, arguments: Self.fastHeartbeats)
        let ready = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")

        let first = try #require(try coordinator.run(job(1, envelope: true), audio: song, on: ready.worker))
        #expect(first.body.job == 1 && first.body.attempt == 1 && first.body.error == nil)
        let analysis = try #require(first.body.analysis)
        #expect(analysis.detector == "comb-filter")
        #expect(abs((analysis.bpm ?? 0) - 120) <= 1.2)
        let audio = try #require(first.body.audio)
        #expect(audio.format == "wav" && audio.sampleRate == 22_050 && audio.channels == 2)
        #expect(abs(audio.durationS - 20) < 1e-6)
        let hop = try #require(first.body.envelopeHopS)
        let envelope = try #require(first.envelope)
        #expect(abs(Double(envelope.count) * hop - 20) < 2 * hop)

        let garbage = try #require(try coordinator.run(job(2, attempt: 3), audio: Array(repeating: 0x5A, count: 4000), on: ready.worker))
        #expect(garbage.body.job == 2 && garbage.body.attempt == 3 && garbage.body.analysis == nil)
        #expect(garbage.body.error?.code == .unsupportedFormat)
        #expect(garbage.envelope == nil)

        let empty = try #require(try coordinator.run(job(3), audio: [], on: ready.worker))
        #expect(empty.body.error?.code == .empty)

        let cut = try #require(try coordinator.run(job(4), audio: Array(song.prefix(20_000)), on: ready.worker))
        #expect(cut.body.error?.code == .truncated)

        let badParameters = try #require(try coordinator.run(
            job(5, params: ParameterSet(["min_bpm": .number(150), "max_bpm": .number(100)])), audio: song, on: ready.worker))
        #expect(badParameters.body.error?.code == .invalidParameter)
        #expect(badParameters.body.error?.message.contains("min_bpm") == true)

        // Still alive and still right; without `envelope`, no envelope frame.
        let last = try #require(try coordinator.run(job(6), audio: song, on: ready.worker))
        #expect(abs((last.body.analysis?.bpm ?? 0) - 120) <= 1.2)
        #expect(last.body.envelopeHopS == nil && last.envelope == nil)
        #expect(worker.process.isRunning)
    }

    @Test func heartbeatsGoOnWhileASongIsAnalysed() throws {
        // A long song, so that its analysis lasts many heartbeat intervals.
        let song = try longDrumWAV(minutes: 15)
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(connect: coordinator.endpoint, arguments: Self.fastHeartbeats)
        let ready = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")
        let sent = ContinuousClock.now
        try coordinator.send(.job(job(1), audio: song), to: ready.worker)
        var arrivals = [sent]
        var result: ResultBody?
        while result == nil, let received = try coordinator.receive(timeout: .seconds(60)) {
            arrivals.append(received.at)
            if case .result(let body, _) = received.message { result = body }
        }
        #expect(try #require(result).analysis != nil)
        let elapsed = arrivals.last! - sent
        let gaps = zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }
        // The coordinator would declare the worker dead after 3 silent intervals (0.6 s).
        #expect(elapsed > .milliseconds(800), "the analysis was too quick to show anything")
        #expect(gaps.max()! < .milliseconds(600), "longest silence \(gaps.max()!) during a job of \(elapsed)")
        #expect(arrivals.count - 2 >= 2, "heartbeats during the job: \(arrivals.count - 2)")
    }

    @Test func theWorkerComesBackWhenTheCoordinatorDoes() throws {
        let song = try drumWAV(bpm: 120, seconds: 10)
        var coordinator = try FakeCoordinator()
        let endpoint = coordinator.endpoint
        let worker = try WorkerProcess(connect: endpoint, arguments: Self.fastHeartbeats)
        let first = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")
        try coordinator.send(.heartbeat, to: first.worker)

        // Gone: after 3 silent intervals the worker drops its socket and waits 1 s.
        let silences = worker.mentions("nothing from the coordinator")
        coordinator.close()
        try worker.awaitLog("nothing from the coordinator", moreThan: silences)
        coordinator = try FakeCoordinator(endpoint: endpoint)
        let second = try #require(try coordinator.awaitReady(timeout: .seconds(10)), "no READY again; worker log:\n\(worker.log)")
        #expect(second.body.workerId == first.body.workerId)
        #expect(second.worker != first.worker, "a new socket, a new connection")

        // A DISCONNECT refusing the worker: it reconnects with a new READY too.
        try coordinator.send(
            .disconnect(DisconnectBody(error: ErrorBody(code: .badRequest, message: "unknown worker"))), to: second.worker)
        let third = try #require(try coordinator.awaitReady(timeout: .seconds(10)), "no READY after DISCONNECT; log:\n\(worker.log)")
        #expect(third.worker != second.worker)
        let result = try #require(try coordinator.run(job(1), audio: song, on: third.worker))
        #expect(result.body.analysis != nil)
    }

    @Test func sigtermWhileIdleSaysGoodbyeAndExitsZero() throws {
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(connect: coordinator.endpoint, arguments: Self.fastHeartbeats)
        _ = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")
        worker.signal(SIGTERM)
        let goodbye = try #require(try coordinator.receiveSkippingHeartbeats(timeout: .seconds(5)))
        guard case .disconnect(let body) = goodbye.message else {
            Issue.record("expected DISCONNECT, received \(goodbye.message.command)")
            return
        }
        #expect(body.error == nil)
        #expect(worker.waitForExit() == 0, "worker log:\n\(worker.log)")
    }

    @Test func sigtermDuringAJobFinishesItFirst() throws {
        let song = try longDrumWAV(minutes: 10)
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(connect: coordinator.endpoint, arguments: Self.fastHeartbeats)
        let ready = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")
        try coordinator.send(.job(job(7), audio: song), to: ready.worker)
        try worker.awaitLog("job 7 (attempt 1)")
        worker.signal(SIGTERM)
        let result = try #require(try coordinator.receiveSkippingHeartbeats(timeout: .seconds(60)), "worker log:\n\(worker.log)")
        guard case .result(let body, _) = result.message else {
            Issue.record("expected the RESULT first, received \(result.message.command)")
            return
        }
        #expect(body.job == 7 && body.analysis != nil)
        let goodbye = try #require(try coordinator.receiveSkippingHeartbeats(timeout: .seconds(5)))
        #expect(goodbye.message.command == .disconnect)
        #expect(worker.waitForExit() == 0, "worker log:\n\(worker.log)")
    }

    @Test func unknownDetectorsAndParametersAreUsageErrors() throws {
        let unknown = try WorkerProcess(connect: "tcp://127.0.0.1:1", detector: "no-such-detector")
        #expect(unknown.waitForExit() == 2)
        #expect(unknown.log.contains("unknown detector 'no-such-detector'"))
        let badParameter = try WorkerProcess(connect: "tcp://127.0.0.1:1", arguments: ["--param", "min_bpm=1000"])
        #expect(badParameter.waitForExit() == 2)
        #expect(badParameter.log.contains("min_bpm"))
    }
}
