import TactusModel

/// The body of a `cadence` request: the recording's name, and where its bytes are (a CSV export
/// of a phone's accelerometer, see ``TactusCadence/RecordingFormat``): in the frame after the
/// body, or, for a recording larger than a frame, in a finished ``upload`` (SPEC section 3.9).
public struct CadenceRequest: WireBody {
    /// The recording's file name, as the reply and its errors name it.
    public var name: String
    /// The id of a finished upload holding the recording's bytes (then no frame follows the body).
    public var upload: String?

    public init(name: String, upload: String? = nil) {
        self.name = name
        self.upload = upload
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.text(name, field: "name", max: 256, command: command)
        if let upload { try UploadRequest.checkID(upload, command: command) }
    }
}

/// The body of a `cadence` reply: the recording's cadence, as `tactus cadence --json` prints it.
extension CadenceReport: WireBody {}
