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
    /// bytes, asked for a piece at a time (``RenderRequest/maxPieceBytes`` a reply), each piece
    /// asked again while the server answers `busy` (for at most a minute).
    public func render(_ id: String) throws(ClientError) -> (status: RenderStatus, wav: [UInt8]?) {
        let first = try renderPiece(id, from: 0)
        guard var wav = first.wav else { return (first.status, nil) }
        // A server older than pieces sends the whole file at once, whatever the offset.
        let size = first.status.bytes ?? wav.count
        guard size <= ProtocolLimits.standard.maxAudioBytes, wav.count <= size else {
            throw .unexpectedReply(expected: "a render of at most \(ProtocolLimits.standard.maxAudioBytes) bytes", received: "\(size) bytes")
        }
        while wav.count < size {
            guard let piece = try renderPiece(id, from: wav.count).wav, !piece.isEmpty, piece.count <= size - wav.count else {
                throw .unexpectedReply(expected: "the render's bytes from \(wav.count) of \(size)", received: "none, or too many")
            }
            wav += piece
        }
        return (first.status, wav)
    }

    /// One `render` request for the piece of the file from `offset`, asked again after each
    /// `busy` answer once the wait it names is over, for at most a minute.
    private func renderPiece(_ id: String, from offset: Int) throws(ClientError) -> RenderCommand.Answer {
        var waited = Duration.zero
        while true {
            do {
                return try send(RenderCommand.self, RenderRequest(render: id, offset: offset))
            } catch {
                guard case .rejected(let refusal) = error, refusal.code == .busy, waited < .seconds(60) else { throw error }
                let pause = Duration.milliseconds(max(refusal.retryAfterMs ?? 1000, 50))
                Thread.sleep(forTimeInterval: pause.seconds)
                waited += pause
            }
        }
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
