import TactusModel

/// The JSON body of an error reply, of a failed job, or of a DISCONNECT: a code, a message
/// for people, and the details some codes carry.
public struct ErrorBody: Sendable, Hashable, Codable, Error, CustomStringConvertible {
    public var code: ErrorCode
    /// One sentence for people; not meant for parsing.
    public var message: String
    /// With ``ErrorCode/busy``: how long to wait before retrying, in milliseconds.
    public var retryAfterMs: Int?
    /// With ``ErrorCode/unsupportedVersion``: the identifiers the receiver speaks (`["TACTUS1"]`).
    public var supportedVersions: [String]?

    public init(code: ErrorCode, message: String, retryAfterMs: Int? = nil, supportedVersions: [String]? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMs = retryAfterMs
        self.supportedVersions = supportedVersions
    }

    enum CodingKeys: String, CodingKey {
        case code, message
        case retryAfterMs = "retry_after_ms"
        case supportedVersions = "supported_versions"
    }

    public var description: String { "\(code): \(message)" }

    /// The longest message kept from a worker, in Unicode scalars: its messages are cut to it
    /// (``bounded()``) before they are stored, logged or published.
    public static let maxPeerMessageCharacters = 1000

    /// This error with its message cut to ``maxPeerMessageCharacters`` (the cut ends with "…").
    public func bounded() -> ErrorBody {
        var bounded = self
        bounded.message = BoundedText.cut(message, toScalars: Self.maxPeerMessageCharacters)
        return bounded
    }

    /// The error body that answers `error`: its code and its description.
    public init(_ error: some CodedError) {
        self.init(code: error.code, message: error.description)
    }

    /// The error body of a failed analysis: its code and message.
    public init(_ failure: AnalysisFailure) {
        self.init(code: failure.code, message: failure.message)
    }

    /// The error body that answers any error: an error body as it is, a protocol error's body,
    /// a ``CodedError`` by its code and description, anything else `internal` with its description.
    public init(answering error: any Error) {
        switch error {
        case let body as ErrorBody: self = body
        case let problem as ProtocolError: self = problem.body
        case let coded as any CodedError: self.init(coded)
        default: self.init(code: .internal, message: "\(error)")
        }
    }
}

extension AnalysisFailure {
    /// The failure of an analysis that `error` ended: its code and message.
    public init(_ error: ErrorBody) {
        self.init(code: error.code, message: error.message)
    }
}
