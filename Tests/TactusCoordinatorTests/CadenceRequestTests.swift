import Foundation
import TactusClient
import TactusModel
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

    /// A recording larger than a frame comes as an upload that the request names: analysed from
    /// the upload's file (`TactusClient` uploads it by itself), and the upload removed once
    /// answered.
    @Test func aRecordingInAnUploadIsAnsweredAndTheUploadRemoved() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let (csv, recording) = Self.recording(seconds: 600, cadence: 165)
        #expect(csv.count > 1 << 20)
        let report = try TactusClient(server: running.endpoints.frontend, timeout: .seconds(30)).cadence(of: csv, name: "long run.csv")
        #expect(report.file == "long run.csv")
        #expect(report.format == .sensorLogger)
        let truth = try #require(recording.cadence(from: 0, to: 600))
        #expect(abs((report.cadence ?? 0) - truth) < 1)
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory.file("uploads"))).isEmpty)

        // By hand: the upload is used once, by its own client, with the bytes it announced.
        let client = try TestClient(running)
        let upload = try Self.upload(csv, by: client)
        guard case .error(let foreign) = try TestClient(running).request(.cadence(CadenceRequest(name: "a.csv", upload: upload), recording: nil))
        else { Issue.record("another client's upload was analysed"); return }
        #expect(foreign.code == .notFound, "\(foreign)")
        guard try client.request(.cadence(CadenceRequest(name: "a.csv", upload: upload), recording: nil), timeout: .seconds(30))?.answer(CadenceCommand.self) != nil
        else { Issue.record("the upload was not analysed"); return }
        guard case .error(let again) = try client.request(.cadence(CadenceRequest(name: "a.csv", upload: upload), recording: nil))
        else { Issue.record("an upload was analysed twice"); return }
        #expect(again.code == .notFound, "\(again)")

        var other = csv
        other[other.count - 2] = other[other.count - 2] == UInt8(ascii: "7") ? UInt8(ascii: "8") : UInt8(ascii: "7")
        let wrong = try Self.upload(other, announcing: SongID(hashing: csv), by: client)
        guard case .error(let mismatch) = try client.request(.cadence(CadenceRequest(name: "b.csv", upload: wrong), recording: nil))
        else { Issue.record("bytes that are not those announced were analysed"); return }
        #expect(mismatch.code == .badRequest && mismatch.message.hasPrefix("b.csv: ") && mismatch.message.contains("SHA-256"), "\(mismatch)")
    }

    /// An upload larger than the server's limit for recordings is `too-large`, before it is read.
    @Test func aRecordingUploadOverTheLimitIsTooLarge() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxRecordingBytes = 1 << 20 }
        defer { running.stop() }
        let csv = Self.recording(seconds: 600).csv
        let client = try TestClient(running)
        let upload = try Self.upload(csv, by: client)
        guard case .error(let error) = try client.request(.cadence(CadenceRequest(name: "long.csv", upload: upload), recording: nil))
        else { Issue.record("a recording over the limit was accepted"); return }
        #expect(error.code == .tooLarge)
        #expect(error.message == "long.csv: \(csv.count) bytes, more than the limit of \(1 << 20) bytes")
    }

    /// Uploads `bytes` announced with the SHA-256 `sha256` (theirs by default); the upload's id.
    static func upload(_ bytes: [UInt8], announcing sha256: SongID? = nil, by client: TestClient) throws -> String {
        let begin = UploadRequest.begin(size: Int64(bytes.count), sha256: sha256 ?? SongID(hashing: bytes))
        guard var status = try client.request(.upload(begin, chunk: nil)).answer(UploadCommand.self) else { throw HarnessError("no upload") }
        while status.received < status.size {
            let start = Int(status.received), end = min(start + status.chunkBytes, bytes.count)
            guard let next = try client.request(.upload(.chunk(status.upload, offset: status.received), chunk: Array(bytes[start..<end]))).answer(UploadCommand.self)
            else { throw HarnessError("a chunk was refused") }
            status = next
        }
        return status.upload
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
