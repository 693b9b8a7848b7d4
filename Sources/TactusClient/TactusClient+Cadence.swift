import TactusModel
import TactusProtocol

extension TactusClient {
    /// The cadence of an accelerometer recording (CSV bytes) named `name`, analysed by the server.
    /// A recording larger than ``inlineSongBytes`` is uploaded in chunks first (``upload(_:)``),
    /// and the request names the upload. The wait for the answer grows with the recording's
    /// size (at least ``timeout``).
    ///
    /// - Throws: what ``send(_:timeout:)`` and ``upload(_:)`` throw; `too-large` when the
    ///   recording is over the server's limit for recordings.
    public func cadence(of recording: [UInt8], name: String) throws(ClientError) -> CadenceReport {
        let wait = max(timeout, .milliseconds(Int64(recording.count / 10_000)))
        let request = uploads(recording)
            ? CadenceCommand.Request(CadenceRequest(name: name, upload: try upload(recording)), recording: nil)
            : CadenceCommand.Request(CadenceRequest(name: name), recording: recording)
        return try send(CadenceCommand.self, request, timeout: wait)
    }
}
