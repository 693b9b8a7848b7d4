import TactusCadence
import TactusProtocol

/// The frontend's `cadence` requests: an accelerometer recording analysed on a read thread.
extension CoordinatorLoop {
    /// Checks the recording's size here, then reads and analyses it on one of the read threads
    /// (``BackgroundWork``), so that a long recording never holds up the loop.
    func beginCadence(
        _ request: CadenceRequest, recording: [UInt8], then answer: @escaping (Result<ClientReply.Response, any Error>) -> Void
    ) {
        let limit = configuration.maxRecordingBytes
        guard recording.count <= limit else {
            return answer(.failure(ErrorBody(code: .tooLarge, message: CadenceError(
                file: request.name, .tooLarge(bytes: recording.count, limit: limit)).description)))
        }
        guard reads.inFlight < Self.maxBackgroundWork else {
            return answer(.failure(ErrorBody(
                code: .busy, message: "the server has \(reads.inFlight) reads in hand; try again shortly", retryAfterMs: 200)))
        }
        reads.run({ Self.cadence(of: recording, name: request.name) }, then: answer)
    }

    /// The reply to a `cadence` request: the report, or `bad-recording` naming the problem.
    static func cadence(of recording: [UInt8], name: String) -> Result<ClientReply.Response, any Error> {
        do throws(CadenceError) {
            let analyzer = CadenceAnalyzer()
            return .success(.cadence(try analyzer.analyze(RecordingReader.read(recording, file: name), file: name)))
        } catch {
            return .failure(ErrorBody(code: .badRecording, message: error.description))
        }
    }
}
