import TactusProtocol

/// The frontend's `cadence` requests: an accelerometer recording analysed by the coordinator's
/// ``RecordingAnalyzer`` on a service thread (with `tactus serve`, in a service host process).
extension CoordinatorLoop {
    /// Checks the recording's size here, then hands it to the analyzer on a service thread
    /// (``BackgroundWork``), so that a long recording never holds up the loop nor the reads.
    func beginCadence(
        _ request: CadenceRequest, recording: [UInt8], then answer: @escaping (Result<ClientReply.Response, any Error>) -> Void
    ) {
        guard let analyzer = coordinator.recordings else {
            return answer(.failure(ErrorBody(code: .forbidden, message: "this server does not analyse recordings")))
        }
        let limit = configuration.maxRecordingBytes
        guard recording.count <= limit else {
            return answer(.failure(ErrorBody(
                code: .tooLarge,
                message: "\(request.name): \(recording.count) bytes, more than the limit of \(limit) bytes")))
        }
        guard serviceWork.inFlight < Self.maxBackgroundWork else { return answer(.failure(backgroundBusy(serviceWork))) }
        serviceWork.run({ Result { () throws(ErrorBody) in .cadence(try analyzer.cadence(of: recording, name: request.name)) } }) {
            answer($0.mapError { $0 as any Error })
        }
    }
}
