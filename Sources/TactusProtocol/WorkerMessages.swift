/// What a worker sends to the coordinator's backend ROUTER: frames `TACTUS1`, the command,
/// the JSON body, then the command's binary frames. Workers are DEALER sockets and send no
/// empty delimiter frame.
public enum WorkerMessage: Sendable, Hashable {
    /// The first message after connecting.
    case ready(ReadyBody)
    /// The outcome of a job, with the song's energy envelope when the job asked for it.
    case result(ResultBody, envelope: [Float]?)
    /// "Still here"; sent when nothing else was sent for a heartbeat interval.
    case heartbeat
    /// The worker is leaving.
    case disconnect(DisconnectBody)

    /// The command frames, in upper case as in Majordomo.
    public enum Command: String, Sendable, CaseIterable {
        case ready = "READY", result = "RESULT", heartbeat = "HEARTBEAT", disconnect = "DISCONNECT"
    }

    public var command: Command {
        switch self {
        case .ready: .ready
        case .result: .result
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        }
    }

    /// The message's frames, from the protocol identifier on.
    public func frames() throws(ProtocolError) -> [[UInt8]] {
        let name = command.rawValue
        let header = [ProtocolVersion.current.frame, Array(name.utf8)]
        switch self {
        case .ready(let body): return header + [try JSONBody.encode(body, command: name)]
        case .result(let body, let envelope):
            guard (body.envelopeHopS == nil) == (envelope == nil) else {
                throw .unencodable(command: name, detail: "envelope_hop_s is set exactly when the envelope is sent")
            }
            return header + [try JSONBody.encode(body, command: name)] + (envelope.map { [Float32Frame.encode($0)] } ?? [])
        case .heartbeat: return header + [try JSONBody.encode(EmptyBody(), command: name)]
        case .disconnect(let body): return header + [try JSONBody.encode(body, command: name)]
        }
    }

    /// Decodes a worker's message as the backend ROUTER received it, routing id removed.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(ProtocolError) {
        var (command, reader) = try BackendHeader.read(frames, message: "worker message", limits: limits, as: Command.self)
        switch command {
        case .ready: self = .ready(try reader.onlyBody(ReadyBody.self, limits: limits))
        case .result:
            let body = try reader.body(ResultBody.self, limits: limits)
            self = .result(body, envelope: try reader.floats("envelope", present: body.envelopeHopS != nil, limits: limits))
        case .heartbeat:
            _ = try reader.onlyBody(EmptyBody.self, limits: limits)
            self = .heartbeat
        case .disconnect: self = .disconnect(try reader.onlyBody(DisconnectBody.self, limits: limits))
        }
    }
}

/// What the coordinator sends to a worker (frames as in ``WorkerMessage``).
public enum CoordinatorMessage: Sendable, Hashable {
    /// A job, with the song's bytes.
    case job(JobBody, audio: [UInt8])
    /// "Still here"; sent to every worker each heartbeat interval.
    case heartbeat
    /// The coordinator refuses the worker (with an error) or is shutting down (without).
    case disconnect(DisconnectBody)

    public enum Command: String, Sendable, CaseIterable {
        case job = "JOB", heartbeat = "HEARTBEAT", disconnect = "DISCONNECT"
    }

    public var command: Command {
        switch self {
        case .job: .job
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        }
    }

    /// The message's frames, from the protocol identifier on (the backend ROUTER sends them
    /// after the worker's routing id).
    public func frames() throws(ProtocolError) -> [[UInt8]] {
        let name = command.rawValue
        let header = [ProtocolVersion.current.frame, Array(name.utf8)]
        switch self {
        case .job(let body, let audio): return header + [try JSONBody.encode(body, command: name), audio]
        case .heartbeat: return header + [try JSONBody.encode(EmptyBody(), command: name)]
        case .disconnect(let body): return header + [try JSONBody.encode(body, command: name)]
        }
    }

    /// Decodes a message as a worker's DEALER received it.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(ProtocolError) {
        var (command, reader) = try BackendHeader.read(frames, message: "coordinator message", limits: limits, as: Command.self)
        switch command {
        case .job:
            let body = try reader.body(JobBody.self, limits: limits)
            let audio = try reader.rest("audio", min: 1, max: 1)[0]
            guard audio.count <= limits.maxAudioBytes else {
                throw .frameTooLarge(frame: "audio", size: audio.count, limit: limits.maxAudioBytes)
            }
            guard body.location == nil || audio.isEmpty else {
                throw .invalidBody(command: "JOB", field: "location", detail: "a JOB with a location has an empty audio frame")
            }
            self = .job(body, audio: audio)
        case .heartbeat:
            _ = try reader.onlyBody(EmptyBody.self, limits: limits)
            self = .heartbeat
        case .disconnect: self = .disconnect(try reader.onlyBody(DisconnectBody.self, limits: limits))
        }
    }
}

/// The identifier and command frames that start every backend message.
enum BackendHeader {
    /// The command named by the command frame, and a reader positioned at the body.
    static func read<Command: RawRepresentable & CaseIterable>(
        _ frames: [[UInt8]], message: String, limits: ProtocolLimits, as type: Command.Type
    ) throws(ProtocolError) -> (Command, FrameReader) where Command.RawValue == String {
        var reader = try FrameReader(frames, message: message, limits: limits, minimum: 3)
        _ = try ProtocolVersion.check(try reader.next("identifier", limit: .max))
        let frame = try reader.next("command", limit: .max)
        reader.command = Printable.text(frame, limit: 32)
        guard let command = Command.allCases.first(where: { Array($0.rawValue.utf8) == frame }) else {
            throw .unknownCommand(received: reader.command, known: Command.allCases.map(\.rawValue))
        }
        return (command, reader)
    }
}
