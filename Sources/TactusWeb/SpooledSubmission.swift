import Foundation
import TactusClient
import TactusProtocol

extension TactusClient {
    /// Submits a spooled upload: in one `submit` message up to ``inlineSongBytes``, else as an
    /// upload (SPEC section 3.9) whose chunks are read back from the spool one at a time, then a
    /// `submit` naming it. The gateway waits out `busy` answers that ask for at most 5 s, 15 s in
    /// all, and then lets its own client retry (the answer is 429 `busy`); an upload the
    /// coordinator forgot (a restart) is uploaded again, twice at most.
    func submit(_ request: SubmitRequest, spooled song: SpooledSong) throws -> SubmitResponse {
        var patience = BusyPatience()
        if song.size <= inlineSongBytes {
            return try submitWhileBusy(request, audio: try song.bytes(from: 0, count: song.size)) { refusal, wait in
                try patience.wait(wait, for: refusal)
            }
        }
        var uploaded: SubmitRequest?
        var uploads = 0
        while true {
            do {
                if uploaded == nil {
                    var withUpload = request
                    withUpload.upload = try upload(song)
                    uploaded = withUpload
                    uploads += 1
                }
                // Reading the song back, hashing and storing it take the coordinator about a second per 100 MB.
                return try send(
                    SubmitCommand.self, SubmitCommand.Request(uploaded!, audio: nil), timeout: timeout + .milliseconds(song.size / 100_000))
            } catch ClientError.rejected(let refusal) where refusal.code == .notFound && uploaded != nil && uploads < 3 {
                uploaded = nil
            } catch ClientError.rejected(let refusal) where refusal.code == .busy {
                try patience.wait(.milliseconds(max(refusal.retryAfterMs ?? 1000, 50)), for: refusal)
            }
        }
    }

    /// Uploads a spooled song in the chunks the coordinator asks for; returns the upload's id.
    private func upload(_ song: SpooledSong) throws -> String {
        let begin = UploadRequest.begin(size: Int64(song.size), sha256: song.id)
        var status = try send(UploadCommand.self, UploadCommand.Request(begin, chunk: nil))
        while status.received < status.size {
            // What the coordinator says is checked before it is used as an offset.
            guard status.size == Int64(song.size), status.received >= 0, status.chunkBytes >= 1 else {
                throw ClientError.unexpectedReply(expected: "upload of \(song.size) bytes", received: "\(status)")
            }
            let start = Int(status.received)
            let chunk = try song.bytes(from: start, count: min(status.chunkBytes, song.size - start))
            let next = try send(UploadCommand.self, UploadCommand.Request(.chunk(status.upload, offset: status.received), chunk: chunk))
            guard next.received > status.received else {
                throw ClientError.unexpectedReply(expected: "upload with more than \(status.received) bytes", received: "\(next.received) bytes")
            }
            status = next
        }
        return status.upload
    }
}

/// How long the gateway waits out the coordinator's `busy` answers for one upload before it
/// answers `busy` itself.
private struct BusyPatience {
    static let longestWait: Duration = .seconds(5)
    static let total: Duration = .seconds(15)
    private var waited: Duration = .zero

    mutating func wait(_ wait: Duration, for refusal: ErrorBody) throws {
        guard wait <= Self.longestWait, waited + wait <= Self.total else { throw ClientError.rejected(refusal) }
        Thread.sleep(forTimeInterval: wait.seconds)
        waited += wait
    }
}
