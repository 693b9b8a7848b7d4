import Foundation
import TactusAudioProbe
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import Testing

/// The bytes of submissions being received and prepared are capped: beyond the cap a
/// submission is answered `busy` with a retry hint instead of taking the coordinator's memory.
@Suite struct IntakeLimitTests {
    /// A probe that holds each song until released, so that submissions pile up in intake.
    final class HoldingProbe: SongProbe {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let probe = AudioProbe()

        func record(of bytes: [UInt8], name: String, id: SongID) throws(ErrorBody) -> SongRecord {
            entered.signal()
            release.wait()
            return try probe.record(of: bytes, name: name, id: id)
        }
    }

    @Test func submissionsBeyondTheIntakeCapAreBusyUntilTheBytesInHandAreDone() throws {
        let directory = try TemporaryDirectory()
        let probe = HoldingProbe()
        let first = try testSong(seed: 1)
        let running = try RunningCoordinator(directory: directory.path, probe: probe) { $0.maxIntakeBytes = first.count + 1000 }
        defer { running.stop() }
        let holder = try TestClient(running)
        let frames = ClientRequest(
            requestID: Array("held".utf8), .submit(SubmitRequest(name: "first.wav", detectors: ["fake"]), audio: first))
        #expect(try holder.socket.trySend(frames.frames()))
        #expect(probe.entered.wait(timeout: .now() + 10) == .success, "the first submission never reached the probe")

        // The first song's bytes are in hand: a second one would go over the cap.
        guard case .error(let busy) = try TestClient(running).request(
            .submit(SubmitRequest(name: "second.wav", detectors: ["fake"]), audio: try testSong(seed: 2)))
        else {
            Issue.record("a submission beyond the intake cap was taken in")
            return
        }
        #expect(busy.code == .busy)
        #expect(busy.message.contains("second.wav") && busy.message.contains("--max-intake-bytes"), "\(busy.message)")
        #expect((busy.retryAfterMs ?? 0) > 0)

        probe.release.signal()
        let reply = try ClientReply(frames: try #require(try holder.socket.receive(timeout: .seconds(10))))
        guard reply.outcome.answer(SubmitCommand.self) != nil else { Issue.record("the first submission failed: \(reply.outcome)"); return }
        // Once the bytes are released, the second song goes in.
        probe.release.signal()
        guard try TestClient(running).request(
            .submit(SubmitRequest(name: "second.wav", detectors: ["fake"]), audio: try testSong(seed: 2))).answer(SubmitCommand.self) != nil
        else {
            Issue.record("still busy once the first submission was done")
            return
        }
    }
}
