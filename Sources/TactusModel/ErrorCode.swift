/// A stable, machine-readable error code, as sent in an error body's `code` field.
///
/// Codes are lowercase words joined by dashes. The set is open: a newer peer may send a code
/// this version does not list, and receivers treat an unknown code like ``internal``.
/// `protocol/SPEC.md` lists every code with when it is used.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard Self.isWellFormed(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an error code is 1 to 40 lowercase letters, digits and dashes")
        }
        self.rawValue = text
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    static func isWellFormed(_ text: String) -> Bool {
        (1...40).contains(text.utf8.count)
            && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// Whether the error is about one song's own bytes (their size, format or content) rather
    /// than the request or the server: a batch of songs reports the song and goes on.
    public var concernsTheSong: Bool {
        [.tooLarge, .empty, .unsupportedFormat, .corrupt, .truncated, .tooShort, .tooLong, .unreadable].contains(self)
    }

    /// Every code this version defines.
    public static let all: [ErrorCode] = [
        .badRequest, .unsupportedVersion, .unknownCommand, .unknownDetector, .invalidParameter,
        .notFound, .busy, .tooLarge, .forbidden, .unavailable, .cancelled, .timeout, .workerLost,
        .empty, .unsupportedFormat, .corrupt, .truncated, .tooShort, .tooLong, .unreadable, .internal, .badRecording,
        .noTempo, .tooFar, .songChanged,
    ]

    // Requests.
    /// The message is malformed: missing frames, bad JSON, a wrong field type, an invalid value.
    public static let badRequest = ErrorCode(rawValue: "bad-request")
    /// The identifier frame names a protocol version the receiver does not speak.
    public static let unsupportedVersion = ErrorCode(rawValue: "unsupported-version")
    /// The command frame names no command of this version.
    public static let unknownCommand = ErrorCode(rawValue: "unknown-command")
    /// A detector no connected worker offers.
    public static let unknownDetector = ErrorCode(rawValue: "unknown-detector")
    /// A parameter unknown to the detector, out of its range, or inconsistent with another.
    public static let invalidParameter = ErrorCode(rawValue: "invalid-parameter")
    /// No such song or job.
    public static let notFound = ErrorCode(rawValue: "not-found")
    /// The queue is full; retry after the body's `retry_after_ms`.
    public static let busy = ErrorCode(rawValue: "busy")
    /// A frame, a song or a result exceeds a configured limit.
    public static let tooLarge = ErrorCode(rawValue: "too-large")
    /// Not allowed: a server-side path outside every library root, or submission by path disabled.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    /// The server is shutting down and accepts no new work.
    public static let unavailable = ErrorCode(rawValue: "unavailable")

    // Jobs.
    /// The job was cancelled by a client.
    public static let cancelled = ErrorCode(rawValue: "cancelled")
    /// The job's analysis ran past the worker's time limit (final at once), or the job
    /// exceeded the coordinator's time limit on every attempt.
    public static let timeout = ErrorCode(rawValue: "timeout")
    /// The job's worker died or went silent on every attempt.
    public static let workerLost = ErrorCode(rawValue: "worker-lost")

    // Audio decoding (a job's failure; the same codes as `tactus probe`).
    /// The song has no bytes.
    public static let empty = ErrorCode(rawValue: "empty")
    /// The bytes are not a format the decoders read.
    public static let unsupportedFormat = ErrorCode(rawValue: "unsupported-format")
    /// The bytes claim a format but are damaged.
    public static let corrupt = ErrorCode(rawValue: "corrupt")
    /// The stream ends before its declared end.
    public static let truncated = ErrorCode(rawValue: "truncated")
    /// Too short to analyse.
    public static let tooShort = ErrorCode(rawValue: "too-short")
    /// Longer than the configured maximum duration.
    public static let tooLong = ErrorCode(rawValue: "too-long")
    /// A server-side path that cannot be read.
    public static let unreadable = ErrorCode(rawValue: "unreadable")
    /// A file analysed in place no longer holds the song's bytes: it changed (or was replaced)
    /// since it was submitted or scanned; a new scan analyses the new bytes.
    public static let songChanged = ErrorCode(rawValue: "song-changed")

    // Services.
    /// A `cadence` request's recording could not be read or is too short: not a recording,
    /// too few samples, non-monotonic or duplicated timestamps, values that are not numbers,
    /// an absurd sampling rate. The message names the recording and the problem.
    public static let badRecording = ErrorCode(rawValue: "bad-recording")
    /// A `stretch` request's song has no tempo in the library: no detector found one, or its
    /// analyses are not done yet.
    public static let noTempo = ErrorCode(rawValue: "no-tempo")
    /// A `stretch` request's target is further from the song's tempo (even at half or double) than
    /// its `max_stretch_pct`.
    public static let tooFar = ErrorCode(rawValue: "too-far")

    /// A fault of the server or worker; the message says what.
    public static let `internal` = ErrorCode(rawValue: "internal")
}

/// An error that answers a request with a stable code: the protocol's error body for it is its
/// ``code`` and its description (`ErrorBody(error)` in TactusProtocol).
public protocol CodedError: Error, CustomStringConvertible {
    /// The code an error answer for it carries.
    var code: ErrorCode { get }
}
