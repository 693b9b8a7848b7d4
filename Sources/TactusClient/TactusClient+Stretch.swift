import Foundation
import TactusProtocol

extension TactusClient {
    /// Asks the server to render a song of its library at `bpm` (a `stretch` request): the
    /// render's id and state, `pending` until it is done. Asking again for the same song and tempo
    /// names the same render.
    public func stretch(_ request: StretchRequest) throws(ClientError) -> RenderStatus {
        try send(StretchCommand.self, request)
    }

    /// A render's state (a `render` request) and, once it is done, the rendered WAV file's
    /// bytes, asked for a piece at a time (``RenderRequest/maxPieceBytes`` a reply).
    public func render(_ id: String) throws(ClientError) -> (status: RenderStatus, wav: [UInt8]?) {
        let first = try send(RenderCommand.self, RenderRequest(render: id, offset: 0))
        guard var wav = first.wav else { return (first.status, nil) }
        // A server older than pieces sends the whole file at once, whatever the offset.
        let size = first.status.bytes ?? wav.count
        while wav.count < size {
            guard let piece = try send(RenderCommand.self, RenderRequest(render: id, offset: wav.count)).wav, !piece.isEmpty else {
                throw .unexpectedReply(expected: "the render's bytes from \(wav.count) of \(size)", received: "no bytes")
            }
            wav += piece
        }
        return (first.status, wav)
    }

    /// Renders a song of the server's library at a tempo and downloads it: `stretch`, then `render`
    /// every `poll` until the render is done (its status and the WAV file's bytes), has failed
    /// (``ClientError/rejected(_:)`` with its error), or `deadline` has passed (``ClientError/noAnswer(server:seconds:attempts:)``).
    public func renderedSong(
        _ request: StretchRequest, poll: Duration = .milliseconds(250), deadline: Duration = .seconds(600)
    ) throws(ClientError) -> (status: RenderStatus, wav: [UInt8]) {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        let id = try stretch(request).render
        var polls = 0
        while true {
            let (status, wav) = try render(id)
            polls += 1
            if let wav { return (status, wav) }
            if let error = status.error { throw .rejected(error) }
            guard clock.now < end else { break }
            Thread.sleep(forTimeInterval: poll.seconds)
        }
        throw .noAnswer(server: server, seconds: deadline.seconds, attempts: polls)
    }
}
