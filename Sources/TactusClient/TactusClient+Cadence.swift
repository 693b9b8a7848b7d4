import TactusModel
import TactusProtocol

extension TactusClient {
    /// The cadence of an accelerometer recording (CSV bytes) named `name`, analysed by the server.
    /// The wait for the answer grows with the recording's size (at least ``timeout``).
    public func cadence(of recording: [UInt8], name: String) throws(ClientError) -> CadenceReport {
        let wait = max(timeout, .milliseconds(Int64(recording.count / 10_000)))
        return try send(CadenceCommand.self, CadenceCommand.Request(CadenceRequest(name: name), recording: recording), timeout: wait)
    }
}
