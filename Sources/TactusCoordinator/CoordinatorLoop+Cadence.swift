import TactusProtocol

/// The frontend's `cadence` requests: an accelerometer recording analysed by the coordinator's
/// ``RecordingAnalyzer`` on a service thread (with `tactus serve`, in a service host process).
extension CoordinatorLoop {
    /// Routes `cadence`: the recording is analysed by a service host, waited for on a service thread.
    static func routeCadence(into routes: inout RequestRoutes) {
        routes.on(CadenceCommand.self) { loop, request, _, answer in
            loop.beginCadence(request.body, recording: request.recording, then: answer)
        }
    }

    /// Checks the recording's size here, then hands it to the analyzer on a service thread
    /// (``BackgroundWork``), so that a long recording never holds up the loop nor the reads.
    func beginCadence(
        _ request: CadenceRequest, recording: [UInt8], then answer: @escaping RequestRoutes.Answer
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
