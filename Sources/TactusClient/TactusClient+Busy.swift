import Foundation
import TactusModel
import TactusProtocol

extension TactusClient {
    /// Submits a song, again after each `busy` answer once the wait the server asks for is
    /// over (`retry_after_ms`, 1 s when it names none, at least 50 ms).
    ///
    /// - Parameter pause: called with each `busy` answer and the wait it asks for; it waits
    ///   (by default it sleeps), and may do other work meanwhile, such as reading events.
    /// - Throws: what ``submit(_:audio:)`` throws, except `busy`.
    ///
    /// ```swift
    /// let submitted = try client.submitWhileBusy(SubmitRequest(name: "song.flac"), audio: bytes)
    /// ```
    public func submitWhileBusy(
        _ request: SubmitRequest, audio: [UInt8],
        pause: (ErrorBody, Duration) throws -> Void = { _, wait in Thread.sleep(forTimeInterval: wait.seconds) }
    ) throws -> SubmitResponse {
        // A song sent as an upload is uploaded once: a busy `submit` is asked again with it.
        var uploaded: SubmitRequest?
        while true {
            do throws(ClientError) {
                guard uploads(audio) else { return try submit(request, audio: audio) }
                if uploaded == nil {
                    var withUpload = request
                    withUpload.upload = try upload(audio)
                    uploaded = withUpload
                }
                return try submitUploaded(uploaded!, size: audio.count)
            } catch .rejected(let refusal) where refusal.code == .unknownCommand && uploaded == nil {
                serverTakesUploads = false
            } catch .rejected(let refusal) where refusal.code == .notFound && uploaded != nil {
                uploaded = nil  // forgotten by the server (a restart, a long pause): upload again
            } catch {
                guard case .rejected(let refusal) = error, refusal.code == .busy else { throw error }
                try pause(refusal, .milliseconds(max(refusal.retryAfterMs ?? 1000, 50)))
            }
        }
    }
}
