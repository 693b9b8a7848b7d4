import TactusModel
import TactusProtocol

extension TactusClient {
    /// Sends `audio` as an upload (SPEC section 3.9): begins it with its size and SHA-256, then
    /// sends it in chunks of the size the server takes, one at a time (each answered before the
    /// next is sent, so neither side holds more than a chunk). Returns the upload's id, for the
    /// `submit` that ends it (``submit(_:audio:)`` does all of this for songs larger than
    /// ``inlineSongBytes``).
    ///
    /// - Throws: ``ClientError/rejected(_:)`` with `busy` (too many uploads at the server: try
    ///   again after `retry_after_ms`), `too-large` (over the server's song size limit),
    ///   `unknown-command` (a server older than uploads), and what ``send(_:timeout:)`` throws.
    public func upload(_ audio: [UInt8]) throws(ClientError) -> String {
        let begin = UploadRequest.begin(size: Int64(audio.count), sha256: SongID(hashing: audio))
        var status = try send(UploadCommand.self, UploadCommand.Request(begin, chunk: nil))
        while status.received < status.size {
            // What the server says is checked before it is used as an index.
            guard status.size == Int64(audio.count), status.received >= 0, status.chunkBytes >= 1 else {
                throw .unexpectedReply(expected: "upload of \(audio.count) bytes", received: "\(status)")
            }
            let start = Int(status.received)
            let end = start + min(status.chunkBytes, audio.count - start)
            let chunk = UploadRequest.chunk(status.upload, offset: status.received)
            let next = try send(UploadCommand.self, UploadCommand.Request(chunk, chunk: Array(audio[start..<end])))
            guard next.received > status.received else {
                throw .unexpectedReply(expected: "upload with more than \(status.received) bytes", received: "\(next.received) bytes")
            }
            status = next
        }
        return status.upload
    }

    /// Submits the song of a finished upload (`request.upload` set).
    func submitUploaded(_ request: SubmitRequest, size: Int) throws(ClientError) -> SubmitResponse {
        // Reading the song back, hashing and storing it take the server about a second per 100 MB.
        let wait = timeout + .milliseconds(size / 100_000)
        return try send(SubmitCommand.self, SubmitCommand.Request(request, audio: nil), timeout: wait)
    }

    /// Whether `audio` goes as an upload rather than in the `submit` message.
    func uploads(_ audio: [UInt8]) -> Bool {
        audio.count > inlineSongBytes && serverTakesUploads != false
    }
}
