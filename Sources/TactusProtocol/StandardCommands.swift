import TactusModel

extension ClientCommands {
    /// The commands of protocol `TACTUS1` (SPEC.md section 3), in the order SPEC describes them.
    public static let standard = ClientCommands([
        SubmitCommand.self, StatusCommand.self, ResultCommand.self, QueryCommand.self, CompareCommand.self,
        PlaylistCommand.self, TruthCommand.self, DetectorsCommand.self, CancelCommand.self, CadenceCommand.self,
        StretchCommand.self, RenderCommand.self, ResolveCommand.self, TagsCommand.self, ScanCommand.self,
        PruneCommand.self, UploadCommand.self, TruthImportCommand.self,
    ])
}

// Each command below is its definition and the shorthand that builds its request and answer
// (`.status(StatusRequest())`); the shorthand is a convenience, the generic initialisers of
// ``ClientRequest/Body`` and ``ClientReply/Response`` build any command's.

// MARK: submit

/// A song to analyse: its bytes travel in a frame after the body, unless the body names a
/// server-side `path` or a finished `upload`.
public enum SubmitCommand: ClientCommand {
    public static let name = "submit"

    /// The body and the song's bytes, when they travel in the message.
    public struct Request: Sendable, Hashable {
        public var body: SubmitRequest
        public var audio: [UInt8]?

        public init(_ body: SubmitRequest, audio: [UInt8]?) {
            self.body = body
            self.audio = audio
        }
    }
    public typealias Answer = SubmitResponse

    public static func frames(of request: Request) throws(ProtocolError) -> [[UInt8]] {
        let body = request.body
        guard [body.path != nil, body.upload != nil, request.audio != nil].filter({ $0 }).count == 1 else {
            throw .unencodable(command: name, detail: "a submission has one of a path, an upload or the song's bytes")
        }
        return try frames(body, then: request.audio)
    }

    public static func request(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Request {
        let body = try reader.body(SubmitRequest.self, limits: limits)
        if body.path != nil || body.upload != nil {
            _ = try reader.rest("audio", max: 0)
            return Request(body, audio: nil)
        }
        return Request(body, audio: try reader.binary("audio", limit: limits.maxAudioBytes))
    }

    /// A forced submission sent twice could analyse its song twice, if the first copy finished
    /// before the second arrived.
    public static func isIdempotent(_ request: Request) -> Bool { request.body.force != true }
}

extension ClientRequest.Body {
    public static func submit(_ request: SubmitRequest, audio: [UInt8]?) -> Self {
        Self(SubmitCommand.self, SubmitCommand.Request(request, audio: audio))
    }
}

extension ClientReply.Response {
    public static func submit(_ answer: SubmitResponse) -> Self { Self(SubmitCommand.self, answer) }
}

// MARK: status

/// A job's state, a song's jobs, or the server's state.
public enum StatusCommand: ClientCommand {
    public static let name = "status"
    public typealias Request = StatusRequest
    public typealias Answer = StatusResponse
}

extension ClientRequest.Body {
    public static func status(_ request: StatusRequest) -> Self { Self(StatusCommand.self, request) }
}

extension ClientReply.Response {
    public static func status(_ answer: StatusResponse) -> Self { Self(StatusCommand.self, answer) }
}

// MARK: result

/// A song's analyses and consensus; with its onset envelope in a frame when asked.
public enum ResultCommand: ClientCommand {
    public static let name = "result"
    public typealias Request = ResultRequest

    /// The body, and the envelope's values exactly when `envelope_hop_s` is set.
    public struct Answer: Sendable, Hashable {
        public var body: ResultResponse
        public var envelope: [Float]?

        public init(_ body: ResultResponse, envelope: [Float]?) {
            self.body = body
            self.envelope = envelope
        }
    }

    public static func frames(ofAnswer answer: Answer) throws(ProtocolError) -> [[UInt8]] {
        guard (answer.body.envelopeHopS == nil) == (answer.envelope == nil) else {
            throw .unencodable(command: name, detail: "envelope_hop_s is set exactly when the envelope is sent")
        }
        return try frames(answer.body, then: answer.envelope.map(Float32Frame.encode))
    }

    public static func answer(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Answer {
        let body = try reader.body(ResultResponse.self, limits: limits)
        return Answer(body, envelope: try reader.floats("envelope", present: body.envelopeHopS != nil, limits: limits))
    }
}

extension ClientRequest.Body {
    public static func result(_ request: ResultRequest) -> Self { Self(ResultCommand.self, request) }
}

extension ClientReply.Response {
    public static func result(_ answer: ResultResponse, envelope: [Float]?) -> Self {
        Self(ResultCommand.self, ResultCommand.Answer(answer, envelope: envelope))
    }
}

// MARK: query, compare, playlist, truth, truth-import, detectors, cancel, resolve

/// Songs by tempo range, detector and tag.
public enum QueryCommand: ClientCommand {
    public static let name = "query"
    public typealias Request = QueryRequest
    public typealias Answer = SongList
}

/// One song's analyses side by side.
public enum CompareCommand: ClientCommand {
    public static let name = "compare"
    public typealias Request = CompareRequest
    public typealias Answer = CompareResponse
}

/// Songs for a tempo profile of a run or a set.
public enum PlaylistCommand: ClientCommand {
    public static let name = "playlist"
    public typealias Request = PlaylistQuery
    public typealias Answer = PlaylistResponse
}

/// A song's known tempo, read or set.
public enum TruthCommand: ClientCommand {
    public static let name = "truth"
    public typealias Request = TruthRequest
    public typealias Answer = TruthResponse
}

/// Many songs' known tempi set at once, all or nothing.
public enum TruthImportCommand: ClientCommand {
    public static let name = "truth-import"
    public typealias Request = TruthImportRequest
    public typealias Answer = TruthImportResponse
}

/// The detectors the server's workers offer.
public enum DetectorsCommand: ClientCommand {
    public static let name = "detectors"
    public typealias Request = EmptyBody
    public typealias Answer = DetectorsResponse
}

/// Queued or running jobs withdrawn.
public enum CancelCommand: ClientCommand {
    public static let name = "cancel"
    public typealias Request = CancelRequest
    public typealias Answer = CancelResponse
}

/// The songs that names (ids, prefixes, stored paths, file names) stand for.
public enum ResolveCommand: ClientCommand {
    public static let name = "resolve"
    public typealias Request = ResolveRequest
    public typealias Answer = ResolveResponse
}

extension ClientRequest.Body {
    public static func query(_ request: QueryRequest) -> Self { Self(QueryCommand.self, request) }
    public static func compare(_ request: CompareRequest) -> Self { Self(CompareCommand.self, request) }
    public static func playlist(_ request: PlaylistQuery) -> Self { Self(PlaylistCommand.self, request) }
    public static func truth(_ request: TruthRequest) -> Self { Self(TruthCommand.self, request) }
    public static func truthImport(_ request: TruthImportRequest) -> Self { Self(TruthImportCommand.self, request) }
    public static var detectors: Self { Self(DetectorsCommand.self, EmptyBody()) }
    public static func cancel(_ request: CancelRequest) -> Self { Self(CancelCommand.self, request) }
    public static func resolve(_ request: ResolveRequest) -> Self { Self(ResolveCommand.self, request) }
}

extension ClientReply.Response {
    public static func query(_ answer: SongList) -> Self { Self(QueryCommand.self, answer) }
    public static func compare(_ answer: CompareResponse) -> Self { Self(CompareCommand.self, answer) }
    public static func playlist(_ answer: PlaylistResponse) -> Self { Self(PlaylistCommand.self, answer) }
    public static func truth(_ answer: TruthResponse) -> Self { Self(TruthCommand.self, answer) }
    public static func truthImport(_ answer: TruthImportResponse) -> Self { Self(TruthImportCommand.self, answer) }
    public static func detectors(_ answer: DetectorsResponse) -> Self { Self(DetectorsCommand.self, answer) }
    public static func cancel(_ answer: CancelResponse) -> Self { Self(CancelCommand.self, answer) }
    public static func resolve(_ answer: ResolveResponse) -> Self { Self(ResolveCommand.self, answer) }
}

// MARK: cadence

/// A running recording's cadence: the recording's bytes travel in a frame after the body,
/// unless the body names a finished `upload` (a recording over the frontend's frame limit).
public enum CadenceCommand: ClientCommand {
    public static let name = "cadence"

    /// The body, and the recording's bytes exactly when no upload is named.
    public struct Request: Sendable, Hashable {
        public var body: CadenceRequest
        public var recording: [UInt8]?

        public init(_ body: CadenceRequest, recording: [UInt8]?) {
            self.body = body
            self.recording = recording
        }
    }
    public typealias Answer = CadenceReport

    public static func frames(of request: Request) throws(ProtocolError) -> [[UInt8]] {
        guard (request.body.upload == nil) == (request.recording != nil) else {
            throw .unencodable(command: name, detail: "a recording travels in its frame or in an upload, not both")
        }
        return try frames(request.body, then: request.recording)
    }

    public static func request(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Request {
        let body = try reader.body(CadenceRequest.self, limits: limits)
        if body.upload != nil {
            _ = try reader.rest("recording", max: 0)
            return Request(body, recording: nil)
        }
        return Request(body, recording: try reader.binary("recording", limit: limits.maxAudioBytes))
    }
}

extension ClientRequest.Body {
    public static func cadence(_ request: CadenceRequest, recording: [UInt8]?) -> Self {
        Self(CadenceCommand.self, CadenceCommand.Request(request, recording: recording))
    }
}

extension ClientReply.Response {
    public static func cadence(_ answer: CadenceReport) -> Self { Self(CadenceCommand.self, answer) }
}

// MARK: stretch, render

/// A song of the library to render at another tempo, on the server.
public enum StretchCommand: ClientCommand {
    public static let name = "stretch"
    public typealias Request = StretchRequest
    /// The render accepted (or found, when asked again).
    public typealias Answer = RenderStatus
}

/// A render's state, and its WAV file once done.
public enum RenderCommand: ClientCommand {
    public static let name = "render"
    public typealias Request = RenderRequest

    /// The state, and the rendered file's bytes exactly when the state is `done`.
    public struct Answer: Sendable, Hashable {
        public var status: RenderStatus
        public var wav: [UInt8]?

        public init(_ status: RenderStatus, wav: [UInt8]?) {
            self.status = status
            self.wav = wav
        }
    }

    public static func frames(ofAnswer answer: Answer) throws(ProtocolError) -> [[UInt8]] {
        guard (answer.status.state == .done) == (answer.wav != nil) else {
            throw .unencodable(command: name, detail: "the file is sent exactly when the render is done")
        }
        return try frames(answer.status, then: answer.wav)
    }

    public static func answer(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Answer {
        let status = try reader.body(RenderStatus.self, limits: limits)
        guard status.state == .done else {
            _ = try reader.rest("wav", max: 0)
            return Answer(status, wav: nil)
        }
        return Answer(status, wav: try reader.binary("wav", limit: limits.maxAudioBytes))
    }
}

extension ClientRequest.Body {
    public static func stretch(_ request: StretchRequest) -> Self { Self(StretchCommand.self, request) }
    public static func render(_ request: RenderRequest) -> Self { Self(RenderCommand.self, request) }
}

extension ClientReply.Response {
    public static func stretch(_ answer: RenderStatus) -> Self { Self(StretchCommand.self, answer) }
    public static func render(_ answer: RenderStatus, wav: [UInt8]?) -> Self {
        Self(RenderCommand.self, RenderCommand.Answer(answer, wav: wav))
    }
}

// MARK: tags, scan, prune

/// BPM tags of files under the server's library roots, read or written.
public enum TagsCommand: ClientCommand {
    public static let name = "tags"
    public typealias Request = TagsRequest
    public typealias Answer = TagsResponse

    /// A write renames its songs' files: sent again, it would find them gone.
    public static func isIdempotent(_ request: TagsRequest) -> Bool { request.action == "read" || request.dryRun == true }
}

/// Compare the library roots with the library, queue new and changed files.
public enum ScanCommand: ClientCommand {
    public static let name = "scan"
    public typealias Request = ScanRequest
    public typealias Answer = ScanSummary
}

/// Remove the song bytes no job needs.
public enum PruneCommand: ClientCommand {
    public static let name = "prune"
    public typealias Request = PruneRequest
    public typealias Answer = PruneSummary
}

extension ClientRequest.Body {
    public static func tags(_ request: TagsRequest) -> Self { Self(TagsCommand.self, request) }
    public static func scan(_ request: ScanRequest) -> Self { Self(ScanCommand.self, request) }
    public static func prune(_ request: PruneRequest) -> Self { Self(PruneCommand.self, request) }
}

extension ClientReply.Response {
    public static func tags(_ answer: TagsResponse) -> Self { Self(TagsCommand.self, answer) }
    public static func scan(_ answer: ScanSummary) -> Self { Self(ScanCommand.self, answer) }
    public static func prune(_ answer: PruneSummary) -> Self { Self(PruneCommand.self, answer) }
}

// MARK: upload

/// The beginning of an upload (no chunk), or one chunk of it.
public enum UploadCommand: ClientCommand {
    public static let name = "upload"

    /// The body, and the chunk's bytes exactly when it is not the beginning.
    public struct Request: Sendable, Hashable {
        public var body: UploadRequest
        public var chunk: [UInt8]?

        public init(_ body: UploadRequest, chunk: [UInt8]?) {
            self.body = body
            self.chunk = chunk
        }
    }
    /// Where the upload stands.
    public typealias Answer = UploadStatus

    public static func frames(of request: Request) throws(ProtocolError) -> [[UInt8]] {
        guard request.body.isBeginning == (request.chunk == nil) else {
            throw .unencodable(command: name, detail: "a chunk, and only a chunk, carries bytes")
        }
        return try frames(request.body, then: request.chunk)
    }

    public static func request(from reader: inout FrameReader, limits: ProtocolLimits) throws(ProtocolError) -> Request {
        let body = try reader.body(UploadRequest.self, limits: limits)
        if body.isBeginning {
            _ = try reader.rest("chunk", max: 0)
            return Request(body, chunk: nil)
        }
        let chunk = try reader.binary("chunk", limit: limits.maxAudioBytes)
        guard !chunk.isEmpty else {
            throw .invalidFrame(command: reader.command, frame: "chunk", detail: "a chunk has at least 1 byte")
        }
        return Request(body, chunk: chunk)
    }
}

extension ClientRequest.Body {
    public static func upload(_ request: UploadRequest, chunk: [UInt8]?) -> Self {
        Self(UploadCommand.self, UploadCommand.Request(request, chunk: chunk))
    }
}

extension ClientReply.Response {
    public static func upload(_ answer: UploadStatus) -> Self { Self(UploadCommand.self, answer) }
}
