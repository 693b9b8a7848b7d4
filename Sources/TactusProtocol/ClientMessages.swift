import TactusModel

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

    /// What is asked: one command's request (build one with the command's shorthand,
    /// `.status(StatusRequest())`, or with ``init(_:_:)``).
    public struct Body: Sendable, Hashable, CustomStringConvertible {
        let held: CommandValue

        /// `command`'s `request`.
        public init<C: ClientCommand>(_ command: C.Type, _ request: C.Request) {
            held = CommandValue(command, request: request)
        }

        init(_ held: CommandValue) { self.held = held }

        /// The command asked.
        public var command: any ClientCommand.Type { held.command }

        /// The request, when it is one of `command`'s.
        public func request<C: ClientCommand>(_ command: C.Type) -> C.Request? { held.typed(command, as: C.Request.self) }

        /// Whether sending it twice does no more than sending it once (see
        /// ``ClientCommand/isIdempotent(_:)``).
        public var isIdempotent: Bool { held.command.isIdempotent(requestIn: held) }

        public var description: String { held.description }
    }

    public init(requestID: [UInt8] = [], _ body: Body) {
        self.requestID = requestID
        self.body = body
    }

    /// The message's frames, from the protocol identifier on. A DEALER client sends them
    /// after an empty delimiter frame (`delimited: true`); a REQ socket adds that itself.
    public func frames(delimited: Bool = false) throws(ProtocolError) -> [[UInt8]] {
        let command = body.command
        let header = (delimited ? [[]] : []) + [ProtocolVersion.frontend.frame, Array(command.name.utf8), requestID]
        return header + (try command.frames(ofRequestIn: body.held))
    }

    /// Decodes a request from its frames, envelope removed (see ``ClientEnvelope/split(_:)``).
    ///
    /// - Throws: a ``RequestRejection`` holding the problem and what is needed to answer it.
    public init(
        frames: [[UInt8]], limits: ProtocolLimits = .standard, commands: ClientCommands = .standard
    ) throws(RequestRejection) {
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
            guard let known = commands.command(named: commandFrame) else {
                throw .unknownCommand(received: command, known: commands.names)
            }
            reader.command = known.name
            self.init(requestID: requestID, Body(try known.decodeRequest(&reader, limits: limits)))
        } catch {
            throw RequestRejection(requestID: requestID, command: command, error: error)
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

        /// The answer, when the request succeeded and this is `command`'s answer.
        public func answer<C: ClientCommand>(_ command: C.Type) -> C.Answer? {
            guard case .ok(let response) = self else { return nil }
            return response.answer(command)
        }
    }

    /// A successful reply.
    public init(requestID: [UInt8], _ response: Response) {
        self.command = response.command.name
        self.requestID = requestID
        self.outcome = .ok(response)
    }

    /// An error reply.
    public init(requestID: [UInt8], command: String, error: ErrorBody) {
        self.command = command
        self.requestID = requestID
        self.outcome = .error(error)
    }

    /// The answer to a request: one command's answer (build one with the command's
    /// shorthand, `.status(StatusResponse(...))`, or with ``init(_:_:)``).
    public struct Response: Sendable, Hashable, CustomStringConvertible {
        let held: CommandValue

        /// `command`'s `answer`.
        public init<C: ClientCommand>(_ command: C.Type, _ answer: C.Answer) {
            held = CommandValue(command, answer: answer)
        }

        init(_ held: CommandValue) { self.held = held }

        /// The command answered.
        public var command: any ClientCommand.Type { held.command }

        /// The answer, when it is one of `command`'s.
        public func answer<C: ClientCommand>(_ command: C.Type) -> C.Answer? { held.typed(command, as: C.Answer.self) }

        public var description: String { held.description }
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
            return header + [Self.okStatus] + (try response.command.frames(ofAnswerIn: response.held))
        }
    }

    /// Decodes a reply as a client receives it; a leading empty delimiter frame (on a DEALER)
    /// is skipped.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard, commands: ClientCommands = .standard) throws(ProtocolError) {
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
            guard let known = commands.command(named: commandFrame) else {
                throw .unknownCommand(received: reader.command, known: commands.names)
            }
            outcome = .ok(Response(try known.decodeAnswer(&reader, limits: limits)))
        default:
            throw .invalidFrame(command: reader.command, frame: "status", detail: "expected ok or error, received '\(Printable.text(status, limit: 8))'")
        }
    }
}

extension FrameReader {
    /// The next frame as a validated JSON body of type `T`.
    public mutating func body<T: WireBody>(_ type: T.Type, limits: ProtocolLimits) throws(ProtocolError) -> T {
        let frame = try next("body", limit: limits.maxBodyBytes)
        let body = try JSONBody.decode(T.self, from: frame, command: command, limit: limits.maxBodyBytes)
        try body.validate(command: command)
        return body
    }

    /// The body, which must be the last frame.
    public mutating func onlyBody<T: WireBody>(_ type: T.Type, limits: ProtocolLimits) throws(ProtocolError) -> T {
        let body = try body(type, limits: limits)
        _ = try rest("binary", max: 0)
        return body
    }

    /// The float32 frame that ends the message when `present`, or nothing when not.
    public mutating func floats(_ name: String, present: Bool, limits: ProtocolLimits) throws(ProtocolError) -> [Float]? {
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

    /// The one binary frame that ends the message, of at most `limit` bytes.
    public mutating func binary(_ name: String, limit: Int) throws(ProtocolError) -> [UInt8] {
        let frame = try rest(name, min: 1, max: 1)[0]
        guard frame.count <= limit else { throw .frameTooLarge(frame: name, size: frame.count, limit: limit) }
        return frame
    }
}
