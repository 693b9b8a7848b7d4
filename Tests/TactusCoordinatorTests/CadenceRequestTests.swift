import Foundation
import TactusProtocol
import TactusTestSupport
import Testing

/// `cadence` requests: a recording's bytes analysed in a service host, off the coordinator's process.
@Suite struct CadenceRequestTests {
    static func recording(seconds: Double = 30, cadence: Double = 172) -> (csv: [UInt8], synth: StepRecordingSynth.Recording) {
        var synth = StepRecordingSynth(stretches: [.init(seconds: seconds, from: cadence)])
        synth.seed = 41
        let recording = synth.render()
        return (Array(recording.csv(.sensorLogger).utf8), recording)
    }

    @Test func aRecordingIsAnsweredWithItsCadence() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let (csv, recording) = Self.recording()
        let outcome = try TestClient(running).request(.cadence(CadenceRequest(name: "TotalAcceleration.csv"), recording: csv))
        guard let report = outcome.answer(CadenceCommand.self) else {
            Issue.record("no cadence: \(outcome)")
            return
        }
        #expect(report.file == "TotalAcceleration.csv")
        #expect(report.format == .sensorLogger)
        #expect(report.windows.count == 11)
        let truth = try #require(recording.cadence(from: 0, to: 30))
        #expect(abs((report.cadence ?? 0) - truth) < 1)
    }

    @Test func aBadRecordingIsABadRecordingErrorNamingIt() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let csv = Array("t,x,y,z\n0,0,0,1\n0.01,0,0,1\n0.01,0,0,1\n".utf8)
        let outcome = try TestClient(running).request(.cadence(CadenceRequest(name: "walk.csv"), recording: csv))
        guard case .error(let error) = outcome else {
            Issue.record("a recording with a duplicated timestamp was accepted")
            return
        }
        #expect(error.code == .badRecording)
        #expect(error.message == "walk.csv: line 4: duplicated timestamp 0.01 s (the line before has the same time)")
    }

    @Test func aRecordingOverTheLimitIsTooLarge() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxRecordingBytes = 10_000 }
        defer { running.stop() }
        let client = try TestClient(running)
        guard case .error(let error) = try client.request(.cadence(CadenceRequest(name: "long.csv"), recording: Self.recording().csv))
        else {
            Issue.record("a recording over the limit was accepted")
            return
        }
        #expect(error.code == .tooLarge)
        #expect(error.message.hasPrefix("long.csv: "))
        #expect(error.message.hasSuffix("more than the limit of 10000 bytes"))
        // The server goes on answering.
        guard try client.request(.status(StatusRequest())).answer(StatusCommand.self) != nil else {
            Issue.record("no status after a refused recording")
            return
        }
    }
}
