import Foundation
import TactusModel
import TactusProtocol
import Testing

/// The `cadence` request's frames: a body naming the recording, then the recording's bytes
/// (unless the body names an upload holding them).
@Suite struct CadenceMessageTests {
    static func frames(_ body: String, _ binary: [[UInt8]]) -> [[UInt8]] {
        [Array("TACTUS1".utf8), Array("cadence".utf8), Array("c1".utf8), Array(body.utf8)] + binary
    }

    /// The request of SPEC.md's section 3.6.
    @Test func theSpecificationsExampleIsAccepted() throws {
        let request = try ClientRequest(frames: Self.frames(#"{"name": "TotalAcceleration.csv"}"#, [[0x74, 0x2C]]))
        #expect(request == ClientRequest(
            requestID: Array("c1".utf8), .cadence(CadenceRequest(name: "TotalAcceleration.csv"), recording: [0x74, 0x2C])))
    }

    @Test func aRequestWithoutItsRecordingOrWithAnEmptyNameIsRejected() throws {
        #expect(throws: RequestRejection.self) { try ClientRequest(frames: Self.frames(#"{"name": "a.csv"}"#, [])) }
        #expect(throws: RequestRejection.self) { try ClientRequest(frames: Self.frames(#"{"name": "a.csv"}"#, [[1], [2]])) }
        do {
            _ = try ClientRequest(frames: Self.frames(#"{"name": ""}"#, [[1]]))
            Issue.record("an empty name was accepted")
        } catch {
            #expect(error.reply.outcome == .error(error.error.body))
            #expect(error.description.contains("name"))
        }
        let limits = ProtocolLimits(maxAudioBytes: 4)
        #expect(throws: RequestRejection.self) {
            try ClientRequest(frames: Self.frames(#"{"name": "a.csv"}"#, [[1, 2, 3, 4, 5]]), limits: limits)
        }
    }

    /// A recording larger than a frame comes in an upload the body names, and then no frame follows.
    @Test func aRequestNamingAnUploadHasNoRecordingFrame() throws {
        let body = #"{"name": "run.csv", "upload": "0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90"}"#
        let request = try ClientRequest(frames: Self.frames(body, []))
        #expect(request.body == .cadence(CadenceRequest(name: "run.csv", upload: "0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90"), recording: nil))
        #expect(throws: RequestRejection.self) { try ClientRequest(frames: Self.frames(body, [[1]])) }
        #expect(throws: RequestRejection.self) { try ClientRequest(frames: Self.frames(#"{"name": "run.csv", "upload": "../x"}"#, [])) }
        #expect(throws: ProtocolError.self) {
            try ClientRequest(.cadence(CadenceRequest(name: "run.csv", upload: "abc"), recording: [1])).frames()
        }
        #expect(throws: ProtocolError.self) { try ClientRequest(.cadence(CadenceRequest(name: "run.csv"), recording: nil)).frames() }
    }

    @Test func badRecordingIsAnErrorCodeOfThisVersion() {
        #expect(ErrorCode.all.contains(.badRecording))
        #expect(ErrorCode.badRecording.rawValue == "bad-recording")
    }
}
