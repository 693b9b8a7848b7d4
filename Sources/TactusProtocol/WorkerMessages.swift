/// What a worker sends to the coordinator's backend ROUTER: frames `TACTUS1` (or `TACTUS2`),
/// the command, the JSON body, then the command's binary frames. Workers are DEALER sockets
/// and send no empty delimiter frame.
///
/// READY and RESULT have one body per version: ``ready(_:)`` and ``result(_:envelope:)`` are
/// version 1 (one detector, one job), ``offer(_:)`` and ``songResult(_:envelope:)`` version 2
/// (several detectors, all of a song's jobs); HEARTBEAT and DISCONNECT are the same in both;
/// IDENTIFIED exists in version 2 only.
public enum WorkerMessage: Sendable, Hashable {
    /// The first message after connecting (version 1: one detector).
    case ready(ReadyBody)
    /// The first message after connecting (version 2: several detectors).
    case offer(OfferBody)
    /// The outcome of a job, with the song's energy envelope when the job asked for it (version 1).
    case result(ResultBody, envelope: [Float]?)
    /// The outcomes of every job of a version-2 JOB, with the song's envelope when asked for.
    case songResult(SongResultBody, envelope: [Float]?)
    /// The answer to an IDENTIFY (version 2).
    case identified(IdentifiedBody)
    /// "Still here"; sent when nothing else was sent for a heartbeat interval.
    case heartbeat
    /// The worker is leaving.
    case disconnect(DisconnectBody)

    /// The command frames, in upper case as in Majordomo.
    public enum Command: String, Sendable, CaseIterable {
        case ready = "READY", result = "RESULT", heartbeat = "HEARTBEAT", disconnect = "DISCONNECT", identified = "IDENTIFIED"
    }

    public var command: Command {
        switch self {
        case .ready, .offer: .ready
        case .result, .songResult: .result
        case .identified: .identified
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        }
    }

    /// The version this message must be sent in, nil when it reads the same in every version.
    public var requiredVersion: ProtocolVersion? {
        switch self {
        case .ready, .result: .v1
        case .offer, .songResult, .identified: .v2
        case .heartbeat, .disconnect: nil
        }
    }

    /// The message's frames, from the protocol identifier on: in its required version, or in
    /// `version` (the one spoken on the connection) for HEARTBEAT and DISCONNECT.
    public func frames(version: ProtocolVersion = .v1) throws(ProtocolError) -> [[UInt8]] {
        let name = command.rawValue
        let header = [(requiredVersion ?? version).frame, Array(name.utf8)]
        switch self {
        case .ready(let body): return header + [try JSONBody.encode(body, command: name)]
        case .offer(let body): return header + [try JSONBody.encode(body, command: name)]
        case .result(let body, let envelope):
            guard (body.envelopeHopS == nil) == (envelope == nil) else {
                throw .unencodable(command: name, detail: "envelope_hop_s is set exactly when the envelope is sent")
            }
            return header + [try JSONBody.encode(body, command: name)] + (envelope.map { [Float32Frame.encode($0)] } ?? [])
        case .songResult(let body, let envelope):
            guard (body.envelopeHopS == nil) == (envelope == nil) else {
                throw .unencodable(command: name, detail: "envelope_hop_s is set exactly when the envelope is sent")
            }
            return header + [try JSONBody.encode(body, command: name)] + (envelope.map { [Float32Frame.encode($0)] } ?? [])
        case .identified(let body): return header + [try JSONBody.encode(body, command: name)]
        case .heartbeat: return header + [try JSONBody.encode(EmptyBody(), command: name)]
        case .disconnect(let body): return header + [try JSONBody.encode(body, command: name)]
        }
    }

    /// Decodes a worker's message as the backend ROUTER received it, routing id removed.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(ProtocolError) {
        self = try Self.decode(frames, limits: limits).message
    }

    /// Decodes a worker's message, and says which version it came in.
    public static func decode(
        _ frames: [[UInt8]], limits: ProtocolLimits = .standard
    ) throws(ProtocolError) -> (message: WorkerMessage, version: ProtocolVersion) {
        var (version, command, reader) = try BackendHeader.read(frames, message: "worker message", limits: limits, as: Command.self)
        let message: WorkerMessage
        switch (command, version >= .v2) {
        case (.ready, false): message = .ready(try reader.onlyBody(ReadyBody.self, limits: limits))
        case (.ready, true): message = .offer(try reader.onlyBody(OfferBody.self, limits: limits))
        case (.result, false):
            let body = try reader.body(ResultBody.self, limits: limits)
            message = .result(body, envelope: try reader.floats("envelope", present: body.envelopeHopS != nil, limits: limits))
        case (.result, true):
            let body = try reader.body(SongResultBody.self, limits: limits)
            message = .songResult(body, envelope: try reader.floats("envelope", present: body.envelopeHopS != nil, limits: limits))
        case (.identified, true): message = .identified(try reader.onlyBody(IdentifiedBody.self, limits: limits))
        case (.identified, false): throw .unknownCommand(received: command.rawValue, known: ["READY", "RESULT", "HEARTBEAT", "DISCONNECT"])
        case (.heartbeat, _):
            _ = try reader.onlyBody(EmptyBody.self, limits: limits)
            message = .heartbeat
        case (.disconnect, _): message = .disconnect(try reader.onlyBody(DisconnectBody.self, limits: limits))
        }
        return (message, version)
    }
}

/// What the coordinator sends to a worker (frames as in ``WorkerMessage``).
public enum CoordinatorMessage: Sendable, Hashable {
    /// A job, with the song's bytes (version 1).
    case job(JobBody, audio: [UInt8])
    /// Every job of one song for a worker's detectors, with the song's bytes (version 2).
    case songJob(SongJobBody, audio: [UInt8])
    /// A request for the SHA-256 of files below the worker's roots (version 2).
    case identify(IdentifyBody)
    /// "Still here"; sent to every worker each heartbeat interval.
    case heartbeat
    /// The coordinator refuses the worker (with an error) or is shutting down (without).
    case disconnect(DisconnectBody)

    public enum Command: String, Sendable, CaseIterable {
        case job = "JOB", heartbeat = "HEARTBEAT", disconnect = "DISCONNECT", identify = "IDENTIFY"
    }

    public var command: Command {
        switch self {
        case .job, .songJob: .job
        case .identify: .identify
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        }
    }

    /// The version this message must be sent in, nil when it reads the same in every version.
    public var requiredVersion: ProtocolVersion? {
        switch self {
        case .job: .v1
        case .songJob, .identify: .v2
        case .heartbeat, .disconnect: nil
        }
    }

    /// The message's frames, from the protocol identifier on (the backend ROUTER sends them
    /// after the worker's routing id): in its required version, or in `version` (the worker's)
    /// for HEARTBEAT and DISCONNECT.
    public func frames(version: ProtocolVersion = .v1) throws(ProtocolError) -> [[UInt8]] {
        let name = command.rawValue
        let header = [(requiredVersion ?? version).frame, Array(name.utf8)]
        switch self {
        case .job(let body, let audio): return header + [try JSONBody.encode(body, command: name), audio]
        case .songJob(let body, let audio): return header + [try JSONBody.encode(body, command: name), audio]
        case .identify(let body): return header + [try JSONBody.encode(body, command: name)]
        case .heartbeat: return header + [try JSONBody.encode(EmptyBody(), command: name)]
        case .disconnect(let body): return header + [try JSONBody.encode(body, command: name)]
        }
    }

    /// Decodes a message as a worker's DEALER received it.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(ProtocolError) {
        var (version, command, reader) = try BackendHeader.read(frames, message: "coordinator message", limits: limits, as: Command.self)
        switch command {
        case .job:
            let audio: [UInt8]
            if version >= .v2 {
                let body = try reader.body(SongJobBody.self, limits: limits)
                audio = try Self.audio(&reader, located: body.location != nil, limits: limits)
                self = .songJob(body, audio: audio)
            } else {
                let body = try reader.body(JobBody.self, limits: limits)
                audio = try Self.audio(&reader, located: body.location != nil, limits: limits)
                self = .job(body, audio: audio)
            }
        case .identify:
            guard version >= .v2 else { throw .unknownCommand(received: command.rawValue, known: ["JOB", "HEARTBEAT", "DISCONNECT"]) }
            self = .identify(try reader.onlyBody(IdentifyBody.self, limits: limits))
        case .heartbeat:
            _ = try reader.onlyBody(EmptyBody.self, limits: limits)
            self = .heartbeat
        case .disconnect: self = .disconnect(try reader.onlyBody(DisconnectBody.self, limits: limits))
        }
    }

    /// The JOB's audio frame: the song's bytes, or empty when the body names the song's
    /// `location` (`located`).
    private static func audio(_ reader: inout FrameReader, located: Bool, limits: ProtocolLimits) throws(ProtocolError) -> [UInt8] {
        let audio = try reader.rest("audio", min: 1, max: 1)[0]
        guard audio.count <= limits.maxAudioBytes else {
            throw .frameTooLarge(frame: "audio", size: audio.count, limit: limits.maxAudioBytes)
        }
        guard !located || audio.isEmpty else {
            throw .invalidBody(command: "JOB", field: "location", detail: "a JOB with a location has an empty audio frame")
        }
        return audio
    }
}

/// The identifier and command frames that start every backend message.
enum BackendHeader {
    /// The version, the command named by the command frame, and a reader positioned at the body.
    static func read<Command: RawRepresentable & CaseIterable>(
        _ frames: [[UInt8]], message: String, limits: ProtocolLimits, as type: Command.Type
    ) throws(ProtocolError) -> (ProtocolVersion, Command, FrameReader) where Command.RawValue == String {
        var reader = try FrameReader(frames, message: message, limits: limits, minimum: 3)
        let version = try ProtocolVersion.check(try reader.next("identifier", limit: .max))
        let frame = try reader.next("command", limit: .max)
        reader.command = Printable.text(frame, limit: 32)
        guard let command = Command.allCases.first(where: { Array($0.rawValue.utf8) == frame }) else {
            throw .unknownCommand(received: reader.command, known: Command.allCases.map(\.rawValue))
        }
        return (version, command, reader)
    }
}
