import TactusModel

/// The commands a client may send to the coordinator's frontend.
public enum ClientCommand: String, Sendable, Hashable, CaseIterable {
    case submit, status, result, query, compare, playlist, truth, detectors, cancel, cadence, stretch, render, resolve, tags, scan
    case prune, upload
}

/// The frames a ROUTER puts in front of a client's message: the client's routing id, then
/// the empty delimiter frame when the client is a REQ socket or a DEALER that sends one.
///
/// The frame after the envelope is the protocol identifier, which is never empty, so whether
/// a delimiter is there is unambiguous; a reply is wrapped the same way, which a REQ client
/// requires. Clients connect to the frontend directly (no proxy in between), so the routing
/// id is exactly one frame.
public struct ClientEnvelope: Sendable, Hashable {
    /// The routing id the frontend ROUTER gave the client's connection.
    public var routingID: [UInt8]
    /// Whether the client sent an empty delimiter frame.
    public var delimited: Bool
    /// The protocol version the request came in, when it names a supported one: the reply
    /// goes out in the same version.
    public var version: ProtocolVersion

    public init(routingID: [UInt8], delimited: Bool, version: ProtocolVersion = .frontend) {
        self.routingID = routingID
        self.delimited = delimited
        self.version = version
    }

    /// Splits a message received on the frontend ROUTER into its envelope and the message.
    public static func split(_ frames: [[UInt8]]) throws(ProtocolError) -> (envelope: ClientEnvelope, message: [[UInt8]]) {
        guard let routingID = frames.first else {
            throw .missingFrames(message: "routed client message", expected: 1, received: 0)
        }
        let delimited = frames.count > 1 && frames[1].isEmpty
        let message = Array(frames.dropFirst(delimited ? 2 : 1))
        let version = message.first.flatMap { frame in ProtocolVersion.supported.first { $0.frame == frame } } ?? .frontend
        return (ClientEnvelope(routingID: routingID, delimited: delimited, version: version), message)
    }

    /// `message` (frames from the identifier on) addressed back to the client, ready for the
    /// frontend ROUTER, in the version of the request.
    public func wrap(_ message: [[UInt8]]) -> [[UInt8]] {
        var message = message
        if version != .frontend, message.first == ProtocolVersion.frontend.frame { message[0] = version.frame }
        return [routingID] + (delimited ? [[]] : []) + message
    }
}

/// A client's request: frames `TACTUS1`, the command, the request id, the JSON body, then the
/// binary frames of the command (the song's bytes for `submit`).
///
/// The request id is any 0 to 64 bytes the client chooses; the reply carries it back, so a
/// DEALER client can have several requests in flight.
public struct ClientRequest: Sendable, Hashable {
    public var requestID: [UInt8]
    public var body: Body

    /// What is asked, with its JSON body and binary frames.
    public enum Body: Sendable, Hashable {
        /// The song's bytes travel in `audio`, unless the body names a server-side `path` or
        /// a finished `upload`.
        case submit(SubmitRequest, audio: [UInt8]?)
        case status(StatusRequest)
        case result(ResultRequest)
        case query(QueryRequest)
        case compare(CompareRequest)
        case playlist(PlaylistQuery)
        case truth(TruthRequest)
        case detectors
        case cancel(CancelRequest)
        /// An accelerometer recording's bytes travel in `recording`, unless the body names a
        /// finished `upload`.
        case cadence(CadenceRequest, recording: [UInt8]?)
        /// A song of the library to render at another tempo, on the server.
        case stretch(StretchRequest)
        /// A render's state, and its file once done.
        case render(RenderRequest)
        /// The songs that names (ids, prefixes, stored paths, file names) stand for.
        case resolve(ResolveRequest)
        /// BPM tags of files under the server's library roots, read or written.
        case tags(TagsRequest)
        /// Compare the library roots with the library, queue new and changed files.
        case scan(ScanRequest)
        /// Remove the song bytes no job needs.
        case prune(PruneRequest)
        /// The beginning of an upload (no chunk), or one chunk of it.
        case upload(UploadRequest, chunk: [UInt8]?)

        public var command: ClientCommand {
            switch self {
            case .submit: .submit
            case .status: .status
            case .result: .result
            case .query: .query
            case .compare: .compare
            case .playlist: .playlist
            case .truth: .truth
            case .detectors: .detectors
            case .cancel: .cancel
            case .cadence: .cadence
            case .stretch: .stretch
            case .render: .render
            case .resolve: .resolve
            case .tags: .tags
            case .scan: .scan
            case .prune: .prune
            case .upload: .upload
            }
        }
    }

    public init(requestID: [UInt8] = [], _ body: Body) {
        self.requestID = requestID
        self.body = body
    }

    /// The message's frames, from the protocol identifier on. A DEALER client sends them
    /// after an empty delimiter frame (`delimited: true`); a REQ socket adds that itself.
    public func frames(delimited: Bool = false) throws(ProtocolError) -> [[UInt8]] {
        let command = body.command.rawValue
        let header = (delimited ? [[]] : []) + [ProtocolVersion.frontend.frame, Array(command.utf8), requestID]
        switch body {
        case .submit(let request, let audio):
            guard [request.path != nil, request.upload != nil, audio != nil].filter({ $0 }).count == 1 else {
                throw .unencodable(command: command, detail: "a submission has one of a path, an upload or the song's bytes")
            }
            return header + [try JSONBody.encode(request, command: command)] + (audio.map { [$0] } ?? [])
        case .status(let request): return header + [try JSONBody.encode(request, command: command)]
        case .result(let request): return header + [try JSONBody.encode(request, command: command)]
        case .query(let request): return header + [try JSONBody.encode(request, command: command)]
        case .compare(let request): return header + [try JSONBody.encode(request, command: command)]
        case .playlist(let request): return header + [try JSONBody.encode(request, command: command)]
        case .truth(let request): return header + [try JSONBody.encode(request, command: command)]
        case .detectors: return header + [try JSONBody.encode(EmptyBody(), command: command)]
        case .cancel(let request): return header + [try JSONBody.encode(request, command: command)]
        case .cadence(let request, let recording):
            guard (request.upload == nil) == (recording != nil) else {
                throw .unencodable(command: command, detail: "a recording travels in its frame or in an upload, not both")
            }
            return header + [try JSONBody.encode(request, command: command)] + (recording.map { [$0] } ?? [])
        case .stretch(let request): return header + [try JSONBody.encode(request, command: command)]
        case .render(let request): return header + [try JSONBody.encode(request, command: command)]
        case .resolve(let request): return header + [try JSONBody.encode(request, command: command)]
        case .tags(let request): return header + [try JSONBody.encode(request, command: command)]
        case .scan(let request): return header + [try JSONBody.encode(request, command: command)]
        case .prune(let request): return header + [try JSONBody.encode(request, command: command)]
        case .upload(let request, let chunk):
            guard request.isBeginning == (chunk == nil) else {
                throw .unencodable(command: command, detail: "a chunk, and only a chunk, carries bytes")
            }
            return header + [try JSONBody.encode(request, command: command)] + (chunk.map { [$0] } ?? [])
        }
    }

    /// Decodes a request from its frames, envelope removed (see ``ClientEnvelope/split(_:)``).
    ///
    /// - Throws: a ``RequestRejection`` holding the problem and what is needed to answer it.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(RequestRejection) {
        // The command and request id are taken first, as far as they are there, so that any
        // rejection (a version error included) can be matched by the client to its request.
        let commandFrame = frames.count > 1 ? frames[1] : []
        let command = Printable.text(commandFrame, limit: 32)
        var requestID: [UInt8] = []
        if frames.count > 2 && frames[2].count <= limits.maxRequestIDBytes { requestID = frames[2] }
        do throws(ProtocolError) {
            var reader = try FrameReader(frames, message: "client request", limits: limits, minimum: 4)
            let identifier = try reader.next("identifier", limit: .max)
            _ = try reader.next("command", limit: .max)
            _ = try reader.next("request id", limit: limits.maxRequestIDBytes)
            _ = try ProtocolVersion.check(identifier)
            guard let known = ClientCommand(rawValue: String(decoding: commandFrame, as: UTF8.self)),
                Array(known.rawValue.utf8) == commandFrame
            else {
                throw .unknownCommand(received: command, known: ClientCommand.allCases.map(\.rawValue))
            }
            reader.command = known.rawValue
            self.init(requestID: requestID, try Self.decodeBody(known, &reader, limits: limits))
        } catch {
            throw RequestRejection(requestID: requestID, command: command, error: error)
        }
    }

    private static func decodeBody(_ command: ClientCommand, _ reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Body {
        switch command {
        case .submit:
            let request = try reader.body(SubmitRequest.self, limits: limits)
            if request.path != nil || request.upload != nil {
                _ = try reader.rest("audio", max: 0)
                return .submit(request, audio: nil)
            }
            let audio = try reader.rest("audio", min: 1, max: 1)[0]
            guard audio.count <= limits.maxAudioBytes else {
                throw .frameTooLarge(frame: "audio", size: audio.count, limit: limits.maxAudioBytes)
            }
            return .submit(request, audio: audio)
        case .status: return .status(try reader.onlyBody(StatusRequest.self, limits: limits))
        case .result: return .result(try reader.onlyBody(ResultRequest.self, limits: limits))
        case .query: return .query(try reader.onlyBody(QueryRequest.self, limits: limits))
        case .compare: return .compare(try reader.onlyBody(CompareRequest.self, limits: limits))
        case .playlist: return .playlist(try reader.onlyBody(PlaylistQuery.self, limits: limits))
        case .truth: return .truth(try reader.onlyBody(TruthRequest.self, limits: limits))
        case .detectors:
            _ = try reader.onlyBody(EmptyBody.self, limits: limits)
            return .detectors
        case .cancel: return .cancel(try reader.onlyBody(CancelRequest.self, limits: limits))
        case .cadence:
            let request = try reader.body(CadenceRequest.self, limits: limits)
            if request.upload != nil {
                _ = try reader.rest("recording", max: 0)
                return .cadence(request, recording: nil)
            }
            let recording = try reader.rest("recording", min: 1, max: 1)[0]
            guard recording.count <= limits.maxAudioBytes else {
                throw .frameTooLarge(frame: "recording", size: recording.count, limit: limits.maxAudioBytes)
            }
            return .cadence(request, recording: recording)
        case .stretch: return .stretch(try reader.onlyBody(StretchRequest.self, limits: limits))
        case .render: return .render(try reader.onlyBody(RenderRequest.self, limits: limits))
        case .resolve: return .resolve(try reader.onlyBody(ResolveRequest.self, limits: limits))
        case .tags: return .tags(try reader.onlyBody(TagsRequest.self, limits: limits))
        case .scan: return .scan(try reader.onlyBody(ScanRequest.self, limits: limits))
        case .prune: return .prune(try reader.onlyBody(PruneRequest.self, limits: limits))
        case .upload:
            let request = try reader.body(UploadRequest.self, limits: limits)
            if request.isBeginning {
                _ = try reader.rest("chunk", max: 0)
                return .upload(request, chunk: nil)
            }
            let chunk = try reader.rest("chunk", min: 1, max: 1)[0]
            guard !chunk.isEmpty else {
                throw .invalidFrame(command: reader.command, frame: "chunk", detail: "a chunk has at least 1 byte")
            }
            guard chunk.count <= limits.maxAudioBytes else {
                throw .frameTooLarge(frame: "chunk", size: chunk.count, limit: limits.maxAudioBytes)
            }
            return .upload(request, chunk: chunk)
        }
    }
}

/// A request that could not be decoded, with what is needed to answer it: the request id and
/// command as far as they could be read (empty otherwise) and the problem.
public struct RequestRejection: Error, Sendable, Hashable, CustomStringConvertible {
    public var requestID: [UInt8]
    /// The command frame as printable text (escaped, at most 32 characters).
    public var command: String
    public var error: ProtocolError

    public init(requestID: [UInt8], command: String, error: ProtocolError) {
        self.requestID = requestID
        self.command = command
        self.error = error
    }

    /// The error reply to send back.
    public var reply: ClientReply {
        ClientReply(requestID: requestID, command: command, error: error.body)
    }

    public var description: String { error.description }
}

/// The coordinator's answer to a request: frames `TACTUS1`, the command, the request id (both
/// as the request had them), the status (`ok` or `error`), the JSON body, then binary frames
/// (the envelope for `result`).
public struct ClientReply: Sendable, Hashable {
    /// The command answered, as the request named it (possibly an unknown one).
    public var command: String
    public var requestID: [UInt8]
    public var outcome: Outcome

    public enum Outcome: Sendable, Hashable {
        case ok(Response)
        case error(ErrorBody)
    }

    /// A successful reply.
    public init(requestID: [UInt8], _ response: Response) {
        self.command = response.command.rawValue
        self.requestID = requestID
        self.outcome = .ok(response)
    }

    /// An error reply.
    public init(requestID: [UInt8], command: String, error: ErrorBody) {
        self.command = command
        self.requestID = requestID
        self.outcome = .error(error)
    }

    /// The answer to a request, by command.
    public enum Response: Sendable, Hashable {
        case submit(SubmitResponse)
        case status(StatusResponse)
        /// With the envelope's values when `envelope_hop_s` is set.
        case result(ResultResponse, envelope: [Float]?)
        case query(SongList)
        case compare(CompareResponse)
        case playlist(PlaylistResponse)
        case truth(TruthResponse)
        case detectors(DetectorsResponse)
        case cancel(CancelResponse)
        case cadence(CadenceReport)
        /// The render accepted (or found, when asked again).
        case stretch(RenderStatus)
        /// With the rendered WAV file's bytes exactly when the state is `done`.
        case render(RenderStatus, wav: [UInt8]?)
        case resolve(ResolveResponse)
        case tags(TagsResponse)
        case scan(ScanSummary)
        case prune(PruneSummary)
        /// Where an upload stands.
        case upload(UploadStatus)

        public var command: ClientCommand {
            switch self {
            case .submit: .submit
            case .status: .status
            case .result: .result
            case .query: .query
            case .compare: .compare
            case .playlist: .playlist
            case .truth: .truth
            case .detectors: .detectors
            case .cancel: .cancel
            case .cadence: .cadence
            case .stretch: .stretch
            case .render: .render
            case .resolve: .resolve
            case .tags: .tags
            case .scan: .scan
            case .prune: .prune
            case .upload: .upload
            }
        }
    }

    static let okStatus: [UInt8] = Array("ok".utf8)
    static let errorStatus: [UInt8] = Array("error".utf8)

    /// The reply's frames, from the protocol identifier on (wrap them with
    /// ``ClientEnvelope/wrap(_:)`` to send them from the frontend ROUTER).
    public func frames() throws(ProtocolError) -> [[UInt8]] {
        let header = [ProtocolVersion.frontend.frame, Array(command.utf8), requestID]
        switch outcome {
        case .error(let body):
            return header + [Self.errorStatus, try JSONBody.encode(body, command: command)]
        case .ok(let response):
            let ok = header + [Self.okStatus]
            switch response {
            case .submit(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .status(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .result(let body, let envelope):
                guard (body.envelopeHopS == nil) == (envelope == nil) else {
                    throw .unencodable(command: command, detail: "envelope_hop_s is set exactly when the envelope is sent")
                }
                return ok + [try JSONBody.encode(body, command: command)] + (envelope.map { [Float32Frame.encode($0)] } ?? [])
            case .query(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .playlist(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .compare(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .truth(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .detectors(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .cancel(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .cadence(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .stretch(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .scan(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .prune(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .render(let body, let wav):
                guard (body.state == .done) == (wav != nil) else {
                    throw .unencodable(command: command, detail: "the file is sent exactly when the render is done")
                }
                return ok + [try JSONBody.encode(body, command: command)] + (wav.map { [$0] } ?? [])
            case .resolve(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .tags(let body): return ok + [try JSONBody.encode(body, command: command)]
            case .upload(let body): return ok + [try JSONBody.encode(body, command: command)]
            }
        }
    }

    /// Decodes a reply as a client receives it; a leading empty delimiter frame (on a DEALER)
    /// is skipped.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(ProtocolError) {
        let frames = frames.first?.isEmpty == true ? Array(frames.dropFirst()) : frames
        var reader = try FrameReader(frames, message: "reply", limits: limits, minimum: 5)
        _ = try ProtocolVersion.check(try reader.next("identifier", limit: .max))
        // An echoed unknown command is escaped text of at most 32 characters plus an ellipsis.
        let commandFrame = try reader.next("command", limit: 64)
        command = String(decoding: commandFrame, as: UTF8.self)
        reader.command = Printable.text(commandFrame, limit: 32)
        requestID = try reader.next("request id", limit: limits.maxRequestIDBytes)
        let status = try reader.next("status", limit: 8)
        switch status {
        case Self.errorStatus:
            outcome = .error(try reader.onlyBody(ErrorBody.self, limits: limits))
        case Self.okStatus:
            guard let known = ClientCommand(rawValue: command) else {
                throw .unknownCommand(received: reader.command, known: ClientCommand.allCases.map(\.rawValue))
            }
            outcome = .ok(try Self.decodeResponse(known, &reader, limits: limits))
        default:
            throw .invalidFrame(command: reader.command, frame: "status", detail: "expected ok or error, received '\(Printable.text(status, limit: 8))'")
        }
    }

    private static func decodeResponse(_ command: ClientCommand, _ reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Response {
        switch command {
        case .submit: return .submit(try reader.onlyBody(SubmitResponse.self, limits: limits))
        case .status: return .status(try reader.onlyBody(StatusResponse.self, limits: limits))
        case .result:
            let body = try reader.body(ResultResponse.self, limits: limits)
            let envelope = try reader.floats("envelope", present: body.envelopeHopS != nil, limits: limits)
            return .result(body, envelope: envelope)
        case .query: return .query(try reader.onlyBody(SongList.self, limits: limits))
        case .compare: return .compare(try reader.onlyBody(CompareResponse.self, limits: limits))
        case .playlist: return .playlist(try reader.onlyBody(PlaylistResponse.self, limits: limits))
        case .truth: return .truth(try reader.onlyBody(TruthResponse.self, limits: limits))
        case .detectors: return .detectors(try reader.onlyBody(DetectorsResponse.self, limits: limits))
        case .cancel: return .cancel(try reader.onlyBody(CancelResponse.self, limits: limits))
        case .cadence: return .cadence(try reader.onlyBody(CadenceReport.self, limits: limits))
        case .stretch: return .stretch(try reader.onlyBody(RenderStatus.self, limits: limits))
        case .scan: return .scan(try reader.onlyBody(ScanSummary.self, limits: limits))
        case .prune: return .prune(try reader.onlyBody(PruneSummary.self, limits: limits))
        case .render:
            let body = try reader.body(RenderStatus.self, limits: limits)
            guard body.state == .done else {
                _ = try reader.rest("wav", max: 0)
                return .render(body, wav: nil)
            }
            let wav = try reader.rest("wav", min: 1, max: 1)[0]
            guard wav.count <= limits.maxAudioBytes else {
                throw .frameTooLarge(frame: "wav", size: wav.count, limit: limits.maxAudioBytes)
            }
            return .render(body, wav: wav)
        case .resolve: return .resolve(try reader.onlyBody(ResolveResponse.self, limits: limits))
        case .tags: return .tags(try reader.onlyBody(TagsResponse.self, limits: limits))
        case .upload: return .upload(try reader.onlyBody(UploadStatus.self, limits: limits))
        }
    }
}

extension FrameReader {
    /// The next frame as a validated JSON body of type `T`.
    mutating func body<T: WireBody>(_ type: T.Type, limits: ProtocolLimits) throws(ProtocolError) -> T {
        let frame = try next("body", limit: limits.maxBodyBytes)
        let body = try JSONBody.decode(T.self, from: frame, command: command, limit: limits.maxBodyBytes)
        try body.validate(command: command)
        return body
    }

    /// The body, which must be the last frame.
    mutating func onlyBody<T: WireBody>(_ type: T.Type, limits: ProtocolLimits) throws(ProtocolError) -> T {
        let body = try body(type, limits: limits)
        _ = try rest("binary", max: 0)
        return body
    }

    /// The float32 frame that ends the message when `present`, or nothing when not.
    mutating func floats(_ name: String, present: Bool, limits: ProtocolLimits) throws(ProtocolError) -> [Float]? {
        guard present else {
            _ = try rest(name, max: 0)
            return nil
        }
        let frame = try rest(name, min: 1, max: 1)[0]
        guard frame.count <= limits.maxFloatArrayBytes else {
            throw .frameTooLarge(frame: name, size: frame.count, limit: limits.maxFloatArrayBytes)
        }
        return try Float32Frame.decode(frame, command: command, name: name)
    }
}
