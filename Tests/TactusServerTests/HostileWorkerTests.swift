import Foundation
import TactusDetector
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// Anyone who reaches the backend (without CURVE, any local user) may act as a worker. A peer
/// sending large messages it has no business sending (a RESULT with an envelope of megabytes
/// from a worker holding no job, or from a peer that never sent READY) has them dropped as
/// they are read, uncopied, while the coordinator keeps reading the backend: its memory stays
/// low and other clients are answered. (The fourth attack round took the coordinator to 1.5 GB
/// with such messages, and had libzmq abort it when the flooding connections closed while the
/// coordinator had stopped reading them.)
@Suite struct HostileWorkerTests {
    /// A RESULT for a job never given, with an envelope of `values` floats (4 bytes each).
    static func staleResult(values: Int) throws -> [[UInt8]] {
        let descriptor = DetectorDescriptor(name: "hostile", version: "1", summary: "a worker played by a test", specific: [])
        let analysis = TempoAnalysis(
            descriptor: descriptor, params: try descriptor.resolve(),
            output: DetectorOutput(bpm: 120, confidence: 0.5, candidates: [], windows: []), seconds: 0.1)
        let body = ResultBody(
            job: 424_242, attempt: 1, analysis: analysis, audio: AudioFacts(format: "wav", durationS: 30, sampleRate: 44_100, channels: 1),
            envelopeHopS: 0.01)
        return try WorkerMessage.result(body, envelope: [Float](repeating: 0.25, count: values)).frames()
    }

    @Test func largeMessagesAPeerMayNotSendAreDroppedUnread() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(
            dataDirectory: directory.path, extraArguments: ["--no-local-workers", "--log-level", "info"], captureErrors: true)
        let descriptor = DetectorDescriptor(name: "hostile", version: "1", summary: "a worker played by a test", specific: [])
        let ready = try WorkerMessage.ready(
            ReadyBody(workerId: "hostile", detector: DetectorInfo(descriptor), params: try descriptor.resolve())).frames()
        let context = try ZMQContext(socketLinger: .zero)
        // One registered worker without a job, and one peer that never says READY.
        let registered = try context.socket(.dealer)
        try registered.connect(server.endpoints.backend)
        try registered.send(ready)
        #expect(try registered.receive(timeout: .seconds(10)) != nil, "the READY is answered")
        let stranger = try context.socket(.dealer)
        try stranger.connect(server.endpoints.backend)

        let watch = ServerWatch(server: server)
        watch.start()
        // 5 MiB each (over a body's 4 MiB, under the frames a worker may send for songs of two
        // hours): 40 from each peer, 400 MiB.
        let result = try Self.staleResult(values: 5 << 18)
        for _ in 0..<40 {
            for peer in [registered, stranger] {
                try peer.send(result)
            }
        }
        // Each peer's messages are read in order: once a small one after them is answered (a
        // second READY, a message from a peer not registered), all of them were read.
        try registered.send(ready)
        try stranger.send(try WorkerMessage.heartbeat.frames())
        for peer in [registered, stranger] {
            // Heartbeats may come first.
            var answered = false
            while !answered, let answer = try peer.receive(timeout: .seconds(60)) {
                answered = String(decoding: answer.last ?? [], as: UTF8.self).contains("READY")
            }
            #expect(answered, "answered once its messages are read")
        }
        let figures = watch.stop()
        registered.close()
        stranger.close()
        let pid = server.processID
        #expect(kill(pid, 0) == 0, "the coordinator runs")
        #expect(server.stop() == 0)
        let log = server.errors
        #expect(log.contains("dropped workers' messages unread") && log.contains("larger than its sender may send now"), "\(log.suffix(2000))")
        #expect(!log.contains("discarded a stale result"), "a dropped message is not decoded")
        #expect(figures.peakResidentBytes < 200 << 20, "peak \(figures.peakResidentBytes >> 20) MiB")
        #expect(figures.slowestQuery < .milliseconds(500), "slowest query \(figures.slowestQuery)")
    }
}
