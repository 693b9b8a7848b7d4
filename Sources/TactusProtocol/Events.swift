/// An event published on the coordinator's PUB socket: frames topic, `TACTUS1`, the event
/// name, the JSON body.
///
/// The topic is the song id for job and song events, so subscribing to a song id receives
/// that song's events; worker events have the topic `worker:` followed by the detector name,
/// scan progress the topic `scan`.
/// Subscribe to the empty prefix for everything.
public enum Event: Sendable, Hashable {
    case jobDone(JobDoneEvent)
    case jobFailed(JobFailedEvent)
    case songDone(SongDoneEvent)
    case workerJoined(WorkerEvent)
    case workerLost(WorkerEvent)
    /// A running scan's counts so far (after each batch of files looked at).
    case scanProgress(ScanSummary)

    public enum Name: String, Sendable, CaseIterable {
        case jobDone = "job.done", jobFailed = "job.failed", songDone = "song.done"
        case workerJoined = "worker.joined", workerLost = "worker.lost"
        case scanProgress = "scan.progress"
    }

    public var name: Name {
        switch self {
        case .jobDone: .jobDone
        case .jobFailed: .jobFailed
        case .songDone: .songDone
        case .workerJoined: .workerJoined
        case .workerLost: .workerLost
        case .scanProgress: .scanProgress
        }
    }

    /// The prefix of every worker event's topic.
    public static let workerTopicPrefix = "worker:"
    /// The topic of scan progress events.
    public static let scanTopic = "scan"

    /// The topic frame: the song id, or `worker:<detector>`.
    public var topic: [UInt8] {
        switch self {
        case .jobDone(let body): Array(body.song.hex.utf8)
        case .jobFailed(let body): Array(body.song.hex.utf8)
        case .songDone(let body): Array(body.song.hex.utf8)
        case .workerJoined(let body), .workerLost(let body): Array((Self.workerTopicPrefix + body.detector).utf8)
        case .scanProgress: Array(Self.scanTopic.utf8)
        }
    }

    /// The event's frames, topic first.
    public func frames() throws(ProtocolError) -> [[UInt8]] {
        let name = name.rawValue
        let body: [UInt8]
        switch self {
        case .jobDone(let event): body = try JSONBody.encode(event, command: name)
        case .jobFailed(let event): body = try JSONBody.encode(event, command: name)
        case .songDone(let event): body = try JSONBody.encode(event, command: name)
        case .workerJoined(let event), .workerLost(let event): body = try JSONBody.encode(event, command: name)
        case .scanProgress(let event): body = try JSONBody.encode(event, command: name)
        }
        return [topic, ProtocolVersion.frontend.frame, Array(name.utf8), body]
    }

    /// Decodes an event as a SUB socket received it. The topic must match the body.
    public init(frames: [[UInt8]], limits: ProtocolLimits = .standard) throws(ProtocolError) {
        var reader = try FrameReader(frames, message: "event", limits: limits, minimum: 4)
        let topic = try reader.next("topic", limit: 256)
        _ = try ProtocolVersion.check(try reader.next("identifier", limit: .max))
        let nameFrame = try reader.next("event name", limit: .max)
        reader.command = Printable.text(nameFrame, limit: 32)
        guard let name = Name(rawValue: String(decoding: nameFrame, as: UTF8.self)), Array(name.rawValue.utf8) == nameFrame else {
            throw .unknownCommand(received: reader.command, known: Name.allCases.map(\.rawValue))
        }
        switch name {
        case .jobDone: self = .jobDone(try reader.onlyBody(JobDoneEvent.self, limits: limits))
        case .jobFailed: self = .jobFailed(try reader.onlyBody(JobFailedEvent.self, limits: limits))
        case .songDone: self = .songDone(try reader.onlyBody(SongDoneEvent.self, limits: limits))
        case .workerJoined: self = .workerJoined(try reader.onlyBody(WorkerEvent.self, limits: limits))
        case .workerLost: self = .workerLost(try reader.onlyBody(WorkerEvent.self, limits: limits))
        case .scanProgress: self = .scanProgress(try reader.onlyBody(ScanSummary.self, limits: limits))
        }
        guard self.topic == topic else {
            throw .invalidFrame(
                command: name.rawValue, frame: "topic",
                detail: "'\(Printable.text(topic, limit: 64))' does not match the body's song or detector")
        }
    }
}
