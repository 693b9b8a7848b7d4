import Foundation
import TactusDetector
import TactusProtocol
import TactusTestSupport
import Testing

/// `protocol/examples/worker.py`, an external worker in Python, against the fake coordinator:
/// what a plugin written from the SPEC alone must do.
@Suite(.enabled(if: CLI.pythonHasZMQ, "python3 with pyzmq and numpy (make deps installs pyzmq)"))
struct PythonWorkerTests {
    @Test func theExampleWorkerOffersItsDetectorAndAnswersJobs() throws {
        let song = try drumWAV(bpm: 120, seconds: 20)
        let flac = try AudioFileWriter(.flac).encode([Synth.drumPattern(bpm: 120, seconds: 8, sampleRate: 22_050)], sampleRate: 22_050)
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(executable: "/usr/bin/env", arguments: [
            "python3", CLI.repositoryRoot + "/protocol/examples/worker.py",
            "--connect", coordinator.endpoint, "--heartbeat-interval", "0.2",
        ])
        // The READY decoded, so its declaration passed the coordinator's checks.
        let ready = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")
        #expect(ready.body.detector.name == "python-onset")
        #expect(try ready.body.detector.descriptor().parameter("hop_ms") != nil)

        let result = try #require(try coordinator.run(job(1, envelope: true), audio: song, on: ready.worker))
        let analysis = try #require(result.body.analysis, "\(String(describing: result.body.error))")
        #expect(analysis.detector == "python-onset")
        #expect(abs((analysis.bpm ?? 0) - 120) <= 2.4)
        #expect(result.body.audio == AudioFacts(format: "wav", durationS: 20, sampleRate: 22_050, channels: 2))
        let hop = try #require(result.body.envelopeHopS)
        #expect(abs(Double(try #require(result.envelope).count) * hop - 20) < 2 * hop)

        let refused = try #require(try coordinator.run(job(2), audio: flac, on: ready.worker))
        #expect(refused.body.error?.code == .unsupportedFormat)
        let badParameter = try #require(try coordinator.run(
            job(3, params: ParameterSet(["hop_ms": .number(500)])), audio: song, on: ready.worker))
        #expect(badParameter.body.error?.code == .invalidParameter)

        worker.signal(SIGTERM)
        let goodbye = try #require(try coordinator.receiveSkippingHeartbeats(timeout: .seconds(5)), "worker log:\n\(worker.log)")
        #expect(goodbye.message.command == .disconnect)
        #expect(worker.waitForExit() == 0, "worker log:\n\(worker.log)")
    }
}
