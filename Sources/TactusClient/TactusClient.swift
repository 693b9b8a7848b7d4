import TactusProtocol
import TactusModel
import TactusZMQ

/// A connection to a coordinator's frontend: one request at a time, each answered or failed
/// within a bounded time, never a hang (`protocol/SPEC.md`, sections 3 and 8).
///
/// The client is a DEALER socket. Each request gets a fresh request id and the client waits
/// for the reply carrying it; replies to earlier requests (late answers to a copy that timed
/// out) are recognised by their ids and dropped.
///
/// When no reply comes within the timeout, what happens depends on the connection (watched
/// with libzmq's socket monitor, ``ConnectionWatch``):
/// - the server is connected (its handshake done, with CURVE its key admitted): it is there
///   but slow (a loaded machine, a long queue of requests). The client keeps waiting, the
///   wait doubling up to 30 s, telling ``onSlowAnswer`` each time, for at most ``patience``;
///   the request is sent again only when a connection was dropped since it was sent (the
///   copy may have been lost with it), and only when idempotent;
/// - the server is not connected: an idempotent request (every command except a forced
///   `submit`) is sent again, Lazy Pirate style, up to ``retries`` times; then the request
///   fails with ``ClientError/noAnswer(server:seconds:attempts:)``.
///
/// Songs and recordings larger than ``inlineSongBytes`` are sent as a chunked upload (`upload`,
/// SPEC section 3.9) when the server offers it, so that neither side holds a whole large message
/// in ZeroMQ's buffers.
///
/// ```swift
/// let client = try TactusClient(server: "tcp://127.0.0.1:5555")
/// let submitted = try client.submit(SubmitRequest(name: "song.flac"), audio: bytes)
/// let status = try client.status(song: submitted.song)
/// ```
///
/// Like its socket, a client belongs to one thread at a time.
public final class TactusClient {
    /// The frontend's endpoint (`tcp://HOST:PORT`).
    public let server: String
    /// How long to wait for each reply before resending or giving up.
    public var timeout: Duration
    /// How many times an idempotent request is resent after a timeout.
    public var retries: Int
    /// How long a request may go unanswered while the server is connected before it fails
    /// with ``ClientError/unanswered(server:seconds:)``.
    public var patience: Duration = .seconds(900)
    /// Told each time a connected server has not answered a request within the wait, with the
    /// command and the time waited so far (to show progress: the server is slow, not gone).
    public var onSlowAnswer: ((String, Duration) -> Void)?
    /// Songs (and `cadence` recordings) up to this size go in one message; larger ones as an
    /// `upload`. A server takes no frame over ``ProtocolLimits/maxRequestFrameBytes`` by default.
    public var inlineSongBytes = ProtocolLimits.maxRequestFrameBytes
    /// The size limits applied to replies.
    public let limits: ProtocolLimits
    /// The context of the client's sockets; share it with an ``EventSubscriber``.
    public let context: ZMQContext

    private let socket: ZMQSocket
    private let watch: ConnectionWatch
    /// False once the server answered `upload` with `unknown-command`.
    var serverTakesUploads: Bool?
    private let idPrefix: String
    private var counter: UInt64 = 0

    /// The CURVE keys the client's sockets use, nil without CURVE; an ``EventSubscriber``
    /// of the same server needs them too.
    public let curve: CurveClientKeys?

    /// Connects to `server` (the connection itself is made in the background: an absent
    /// server shows as ``ClientError/noAnswer(server:seconds:attempts:)`` on the first request).
    ///
    /// - Parameter curve: the server's public key and the client's key pair, for a server
    ///   whose sockets are CURVE servers. A client whose connections the server closes
    ///   before they are set up (a wrong server key, a key the server has not authorized, or
    ///   past the connections the server allows its address) never gets an answer: its
    ///   requests fail with ``ClientError/connectionRefused(server:seconds:)``.
    public init(
        server: String, timeout: Duration = .milliseconds(2500), retries: Int = 1, limits: ProtocolLimits = .standard,
        context: ZMQContext? = nil, curve: CurveClientKeys? = nil
    ) throws(ClientError) {
        self.server = server
        self.timeout = timeout
        self.retries = max(retries, 0)
        self.limits = limits
        self.curve = curve
        do throws(ZMQError) {
            let shared: ZMQContext
            if let context { shared = context } else { shared = try ZMQContext(socketLinger: .zero) }
            self.context = shared
            socket = try self.context.socket(.dealer)
            // Unsent requests are worthless once the client gives up: never linger on them.
            try socket.set([.linger(.zero), .maxMessageSize(limits.maxFrameBytes)])
            if let curve { try socket.set(curve.socketOptions) }
            watch = try ConnectionWatch(socket, context: shared)
            try socket.connect(server)
        } catch {
            throw .transport(error)
        }
        idPrefix = String(UInt32.random(in: .min ... .max), radix: 16)
    }

    /// Sends `body` and returns the reply's successful answer.
    ///
    /// - Parameter timeout: the wait for each attempt; ``timeout`` when nil. Sending a song
    ///   adds a second per 4 MB to it.
    /// - Throws: ``ClientError/rejected(_:)`` with the coordinator's error (for `busy`, its
    ///   `retry_after_ms` says when to try again), ``ClientError/noAnswer(server:seconds:attempts:)``
    ///   when the server is not connected and nothing came back in time,
    ///   ``ClientError/unanswered(server:seconds:)`` when it is connected and did not answer
    ///   within ``patience``, and the other cases for what cannot be sent or read.
    public func send(_ body: ClientRequest.Body, timeout: Duration? = nil) throws(ClientError) -> ClientReply.Response {
        counter += 1
        let requestID = Array("\(idPrefix)-\(counter)".utf8)
        let frames: [[UInt8]]
        do throws(ProtocolError) {
            frames = try ClientRequest(requestID: requestID, body).frames(delimited: true)
        } catch {
            throw .unencodable(error)
        }
        // A server drops the connection that sends a frame over its limit, unanswered: refused
        // here. (The frames: delimiter, identifier, command, request id, body, binary.)
        let limit = max(inlineSongBytes, ProtocolLimits.maxRequestFrameBytes)
        if let index = frames.indices.first(where: { frames[$0].count > limit }) {
            throw .unencodable(.unencodable(
                command: body.command.name,
                detail: "the \(index == 4 ? "body" : "binary") frame has \(frames[index].count) bytes, more than the \(limit) a server takes in one frame"))
        }
        let base = (timeout ?? self.timeout) + .milliseconds(frames.reduce(0) { $0 + $1.count } / 4_000)
        let idempotent = body.isIdempotent
        let attempts = idempotent ? retries + 1 : 1
        let clock = ContinuousClock()
        let start = clock.now
        var wait = base
        var unansweredAttempts = 0
        var disconnectionsAtSend = 0
        var mustSend = true
        while true {
            if mustSend {
                do throws(ZMQError) {
                    disconnectionsAtSend = try watch.disconnections
                    // A request that cannot be queued now is as good as lost: the wait tells.
                    _ = try socket.trySend(frames)
                } catch {
                    throw .transport(error)
                }
                mustSend = false
            }
            if let reply = try awaitReply(to: requestID, within: wait) {
                switch reply.outcome {
                case .ok(let response):
                    guard response.command == body.command else {
                        throw .unexpectedReply(expected: body.command.name, received: reply.command)
                    }
                    return response
                case .error(let error):
                    throw .rejected(error)
                }
            }
            let connected: Bool
            do throws(ZMQError) { connected = try watch.isConnected } catch { throw .transport(error) }
            let waited = clock.now - start
            if connected {
                // There, but slow: wait on (sending again only what a lost connection may have lost).
                guard waited < patience else { throw .unanswered(server: server, seconds: waited.seconds) }
                onSlowAnswer?(body.command.name, waited)
                if idempotent, (try? watch.disconnections) != disconnectionsAtSend { mustSend = true }
                wait = min(wait * 2, max(.seconds(30), base), patience - waited)
            } else {
                unansweredAttempts += 1
                guard unansweredAttempts < attempts else {
                    if (try? watch.closedBeforeHandshake) ?? 0 > 0 {
                        throw .connectionRefused(server: server, seconds: base.seconds * Double(attempts))
                    }
                    throw .noAnswer(server: server, seconds: base.seconds * Double(attempts), attempts: attempts)
                }
                mustSend = true
                wait = base
            }
        }
    }


    /// Sends `command`'s `request` and returns its answer (see ``send(_:timeout:)``).
    public func send<C: ClientCommand>(_ command: C.Type, _ request: C.Request, timeout: Duration? = nil) throws(ClientError) -> C.Answer {
        let response = try send(ClientRequest.Body(command, request), timeout: timeout)
        // `send` checked that the reply answers this command, and decoded it as its answer.
        guard let answer = response.answer(command) else {
            throw .unexpectedReply(expected: command.name, received: response.command.name)
        }
        return answer
    }

    /// The reply whose request id is `requestID`, or nil when none came within `wait`.
    private func awaitReply(to requestID: [UInt8], within wait: Duration) throws(ClientError) -> ClientReply? {
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        while true {
            let remaining = deadline - clock.now
            guard remaining > .zero else { return nil }
            let frames: [[UInt8]]
            do throws(ZMQError) {
                guard let received = try socket.receive(timeout: remaining, maxFrames: limits.maxFrames) else { return nil }
                frames = received
            } catch where error.code == ZMQError.messageTooLarge {
                continue
            } catch {
                throw .transport(error)
            }
            // A reply is matched by its request id (frame 3 after the delimiter) before it is
            // decoded, so a late, stale reply never fails the current request.
            guard frames.count > 3, frames[0].isEmpty, frames[3] == requestID else { continue }
            do throws(ProtocolError) {
                return try ClientReply(frames: frames, limits: limits)
            } catch {
                throw .invalidReply(error)
            }
        }
    }

    // MARK: Commands

    /// Submits a song's bytes for analysis; the answer has the song id and one job per detector.
    /// A song larger than ``inlineSongBytes`` is uploaded in chunks first (``upload(_:)``),
    /// unless the server is older than uploads.
    public func submit(_ request: SubmitRequest, audio: [UInt8]) throws(ClientError) -> SubmitResponse {
        if uploads(audio) {
            do {
                var uploaded = request
                uploaded.upload = try upload(audio)
                return try submitUploaded(uploaded, size: audio.count)
            } catch .rejected(let error) where error.code == .unknownCommand {
                serverTakesUploads = false
            }
        }
        return try send(SubmitCommand.self, SubmitCommand.Request(request, audio: audio))
    }

    /// The state of one job, of one song's jobs (`song`: its id or a unique prefix of at least 8
    /// hex digits), or (with neither) of the server.
    public func status(job: Int64? = nil, song: String? = nil) throws(ClientError) -> StatusResponse {
        try send(StatusCommand.self, StatusRequest(job: job, song: song))
    }

    /// The state of the jobs of the song `song`.
    public func status(song: SongID) throws(ClientError) -> StatusResponse {
        try status(song: song.hex)
    }

    /// A song's stored analyses, and its energy envelope when the request asks for it.
    public func result(_ request: ResultRequest) throws(ClientError) -> (response: ResultResponse, envelope: [Float]?) {
        let answer = try send(ResultCommand.self, request)
        return (answer.body, answer.envelope)
    }

    /// The detectors the connected workers offer.
    public func detectors() throws(ClientError) -> DetectorsResponse {
        try send(DetectorsCommand.self, EmptyBody())
    }

    /// Cancels one job or every unfinished job of a song; the answer lists those cancelled.
    public func cancel(_ request: CancelRequest) throws(ClientError) -> CancelResponse {
        try send(CancelCommand.self, request)
    }

    /// The songs whose tempo lies in the request's range, as `tactus query` lists them.
    public func query(_ request: QueryRequest) throws(ClientError) -> [TempoMatch] {
        try songList(request).songs
    }

    /// The whole answer to `query`: the songs, and the histogram of all matches when the
    /// request asks for one (``QueryRequest/histogram``).
    public func songList(_ request: QueryRequest) throws(ClientError) -> SongList {
        try send(QueryCommand.self, request)
    }

    /// One song's results side by side, or (without a song) the detectors over the whole library.
    public func compare(_ request: CompareRequest) throws(ClientError) -> CompareResponse {
        try send(CompareCommand.self, request)
    }

    /// Songs for a running cadence or a profile of cadences.
    public func playlist(_ request: PlaylistQuery) throws(ClientError) -> Playlist {
        try send(PlaylistCommand.self, request).playlist
    }

    /// A song's reference tempo, set first when the request has a `bpm`.
    public func truth(_ request: TruthRequest) throws(ClientError) -> TruthResponse {
        try send(TruthCommand.self, request)
    }

    /// Many songs' reference tempi, set all or nothing; the number set.
    public func truthImport(_ request: TruthImportRequest) throws(ClientError) -> Int {
        try send(TruthImportCommand.self, request).imported
    }

    /// The songs that names stand for on the server, in order (see ``SongNames`` for names that
    /// are files on this machine).
    public func resolve(_ request: ResolveRequest) throws(ClientError) -> [SongResolution] {
        try send(ResolveCommand.self, request).songs
    }

    /// BPM tags of songs' files under the server's library roots, read or written. Writing a
    /// file decodes it twice, so the request waits `timeout` (longer than the client's default).
    public func tags(_ request: TagsRequest, timeout: Duration = .seconds(300)) throws(ClientError) -> TagsResponse {
        try send(TagsCommand.self, request, timeout: timeout)
    }

}

/// Why a request to the coordinator failed.
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing came back within the time allowed, after `attempts` sends, and the server is
    /// not connected.
    case noAnswer(server: String, seconds: Double, attempts: Int)
    /// The server closed every connection before it was set up, within the time allowed.
    case connectionRefused(server: String, seconds: Double)
    /// The server is connected but did not answer within the client's patience.
    case unanswered(server: String, seconds: Double)
    /// The coordinator answered with an error (`busy` has `retryAfterMs`).
    case rejected(ErrorBody)
    /// The reply could not be decoded.
    case invalidReply(ProtocolError)
    /// The reply answered another command.
    case unexpectedReply(expected: String, received: String)
    /// The request could not be encoded.
    case unencodable(ProtocolError)
    /// A socket failed (an invalid endpoint, for example).
    case transport(ZMQError)

    public var description: String {
        switch self {
        case .noAnswer(let server, let seconds, let attempts):
            "no answer from \(server) within \(Self.format(seconds)) s"
                + (attempts > 1 ? " (\(attempts) attempts)" : "") + ": is the server running?"
        case .connectionRefused(let server, let seconds):
            "\(server) closed every connection before it was set up, for \(Self.format(seconds)) s: it takes no more "
                + "connections from this address (its --max-connections-per-address), or does not admit this client's key"
        case .unanswered(let server, let seconds):
            "\(server) is connected but did not answer within \(Self.format(seconds)) s: the server is overloaded or stuck"
        case .rejected(let error): "the server refused: \(error.code): \(error.message)"
        case .invalidReply(let error): "unreadable reply from the server: \(error)"
        case .unexpectedReply(let expected, let received): "the server answered '\(received)' to '\(expected)'"
        case .unencodable(let error): "cannot send the request: \(error)"
        case .transport(let error): "\(error)"
        }
    }

    private static func format(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
