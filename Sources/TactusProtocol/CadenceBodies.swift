import TactusModel

/// The body of a `cadence` request: the recording's name; its bytes (a CSV export of a phone's
/// accelerometer, see ``TactusCadence/RecordingFormat``) travel in the frame after the body.
public struct CadenceRequest: WireBody {
    /// The recording's file name, as the reply and its errors name it.
    public var name: String

    public init(name: String) {
        self.name = name
    }

    public func validate(command: String) throws(ProtocolError) {
        try Check.text(name, field: "name", max: 256, command: command)
    }
}

/// The body of a `cadence` reply: the recording's cadence, as `tactus cadence --json` prints it.
extension CadenceReport: WireBody {}
