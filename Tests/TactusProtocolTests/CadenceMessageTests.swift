import Foundation
import TactusModel
import TactusProtocol
import Testing

/// The `cadence` request's frames: a body naming the recording, then the recording's bytes.
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

    @Test func badRecordingIsAnErrorCodeOfThisVersion() {
        #expect(ErrorCode.all.contains(.badRecording))
        #expect(ErrorCode.badRecording.rawValue == "bad-recording")
    }
}
