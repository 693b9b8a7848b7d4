import TactusModel

/// Why a sequence of frames is not a valid message, or a message cannot be encoded.
///
/// Decoding never traps and never allocates more than its input: every problem is one of
/// these cases, with the frame or field concerned. Text copied from the input is escaped
/// and truncated (see ``Printable``), so an error is safe to log and to send back.
public enum ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer frames than the message needs (`expected` is the minimum).
    case missingFrames(message: String, expected: Int, received: Int)
    /// More frames than the message allows.
    case tooManyFrames(message: String, limit: Int, received: Int)
    /// A frame is larger than the limit for it.
    case frameTooLarge(frame: String, size: Int, limit: Int)
    /// The identifier frame is not `TACTUS<n>`: not a Tactus message at all.
    case notTactus(received: String)
    /// The identifier frame names a version this implementation does not speak.
    case unsupportedVersion(received: String, supported: [String])
    /// The command frame names no command of this version.
    case unknownCommand(received: String, known: [String])
    /// The body frame is not a UTF-8 JSON object. (Foundation also reports a number that does
    /// not fit its field, such as 4.5 for an integer, this way.)
    case invalidJSON(command: String, detail: String)
    /// The JSON is well-formed but a field is missing, of the wrong type, or out of range.
    case invalidBody(command: String, field: String, detail: String)
    /// A non-JSON frame is malformed (a float array whose size is not a multiple of 4, a
    /// missing envelope delimiter, an audio frame where none belongs...).
    case invalidFrame(command: String, frame: String, detail: String)
    /// A message cannot be encoded (a non-finite number, contradictory fields).
    case unencodable(command: String, detail: String)

    /// The code an error reply for this problem carries.
    public var code: ErrorCode {
        switch self {
        case .unsupportedVersion: .unsupportedVersion
        case .unknownCommand: .unknownCommand
        case .frameTooLarge, .tooManyFrames: .tooLarge
        case .unencodable: .internal
        case .missingFrames, .notTactus, .invalidJSON, .invalidBody, .invalidFrame: .badRequest
        }
    }

    /// The error body that answers this problem.
    public var body: ErrorBody {
        if case .unsupportedVersion(_, let supported) = self {
            return ErrorBody(code: code, message: description, supportedVersions: supported)
        }
        return ErrorBody(code: code, message: description)
    }

    public var description: String {
        switch self {
        case .missingFrames(let message, let expected, let received):
            "a \(message) has at least \(expected) frames, received \(received)"
        case .tooManyFrames(let message, let limit, let received):
            "a \(message) has at most \(limit) frames, received \(received)"
        case .frameTooLarge(let frame, let size, let limit):
            "the \(frame) frame has \(size) bytes, more than the limit of \(limit)"
        case .notTactus(let received):
            "not a Tactus message: the identifier frame is '\(received)', expected TACTUS followed by a version number"
        case .unsupportedVersion(let received, let supported):
            "protocol version '\(received)' is not supported; supported: \(supported.joined(separator: ", "))"
        case .unknownCommand(let received, let known):
            "unknown command '\(received)'; known: \(known.joined(separator: ", "))"
        case .invalidJSON(let command, let detail):
            "\(command): the body is not a JSON object in UTF-8 (or a number does not fit its field): \(detail)"
        case .invalidBody(let command, let field, let detail):
            "\(command): field '\(field)': \(detail)"
        case .invalidFrame(let command, let frame, let detail):
            "\(command): \(frame) frame: \(detail)"
        case .unencodable(let command, let detail):
            "\(command): cannot encode: \(detail)"
        }
    }
}

/// Size limits a decoder enforces before it parses anything, so that a hostile message costs
/// at most its own size. Sockets should also set `ZMQ_MAXMSGSIZE` to ``maxFrameBytes`` and
/// receive at most ``maxFrames`` frames, so oversized messages are refused before they are
/// read.
public struct ProtocolLimits: Sendable, Hashable {
    /// The most frames in a message, envelope included.
    public var maxFrames: Int
    /// The largest JSON body.
    public var maxBodyBytes: Int
    /// The largest audio frame (a song's bytes).
    public var maxAudioBytes: Int
    /// The largest float32 array frame, in bytes.
    public var maxFloatArrayBytes: Int
    /// The largest request id.
    public var maxRequestIDBytes: Int

    public init(
        maxFrames: Int = 16, maxBodyBytes: Int = 4 << 20, maxAudioBytes: Int = 512 << 20,
        maxFloatArrayBytes: Int = 64 << 20, maxRequestIDBytes: Int = 64
    ) {
        self.maxFrames = maxFrames
        self.maxBodyBytes = maxBodyBytes
        self.maxAudioBytes = maxAudioBytes
        self.maxFloatArrayBytes = maxFloatArrayBytes
        self.maxRequestIDBytes = maxRequestIDBytes
    }

    /// The defaults: 16 frames, 4 MiB of JSON, 512 MiB of audio, 64 MiB of floats, 64-byte request ids.
    public static let standard = ProtocolLimits()

    /// The largest frame a client sends to a coordinator (1 MiB): a request's body, a song or a
    /// recording in one message, a chunk of an upload. A coordinator's frontend takes no larger
    /// frame by default (its `ZMQ_MAXMSGSIZE`, SPEC section 3.4): larger songs and recordings
    /// travel as uploads (section 3.9).
    public static let maxRequestFrameBytes = 1 << 20

    /// The largest single frame these limits allow: the value for a socket's `ZMQ_MAXMSGSIZE`.
    public var maxFrameBytes: Int {
        max(maxBodyBytes, maxAudioBytes, maxFloatArrayBytes, maxRequestIDBytes)
    }
}

/// Text from untrusted bytes, made safe to show: printable ASCII kept, everything else
/// escaped as `\xNN`, cut with an ellipsis so that the text has at most `limit` characters
/// before it (and so at most `limit` + 3 bytes).
enum Printable {
    static func text(_ bytes: some Collection<UInt8>, limit: Int) -> String {
        var text = ""
        var count = 0
        for byte in bytes {
            let piece: String
            if (0x20...0x7E).contains(byte) && byte != 0x5C {
                piece = String(Unicode.Scalar(byte))
            } else {
                piece = "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
            guard count + piece.utf8.count <= limit else {
                text += "…"
                break
            }
            text += piece
            count += piece.utf8.count
        }
        return text
    }

    static func text(_ string: String, limit: Int) -> String {
        text(string.utf8.prefix(limit + 1), limit: limit)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
