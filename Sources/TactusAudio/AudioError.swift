import Foundation
import TactusModel

/// Why a song could not be decoded. Every case names the file (or the name given to
/// in-memory bytes) and has a stable ``code`` for logs, JSON output and clients.
///
/// | code | meaning |
/// |---|---|
/// | `empty` | zero bytes |
/// | `unsupported-format` | the content is not a format Tactus reads |
/// | `corrupt` | the decoder rejected the data (its own message is kept) |
/// | `truncated` | the data ends early and less than the minimum length decoded |
/// | `too-short` | less than the minimum length (5 s by default) of audio |
/// | `too-long` | more than the maximum length (2 h by default) of audio |
/// | `unreadable` | an I/O error: missing file, permission, directory... |
public enum AudioError: CodedError, Sendable, Equatable {
    /// The source has no bytes.
    case empty(file: String)
    /// The content is not recognised as audio Tactus can decode. `detail` says what was seen.
    case unsupportedFormat(file: String, detail: String)
    /// The decoder failed before producing audio; `decoderMessage` is its own message.
    case corrupt(file: String, decoderMessage: String)
    /// The data ends early (or the decoder stopped mid-stream) with less than the minimum
    /// length decoded. With at least the minimum, it is ``AudioWarning/truncated(decodedSeconds:expectedSeconds:reason:)`` instead.
    case truncated(file: String, decodedSeconds: Double, reason: String)
    /// The whole song decoded but lasts less than `minimumSeconds`.
    case tooShort(file: String, seconds: Double, minimumSeconds: Double)
    /// The song lasts more than `maximumSeconds`: by its header (`estimated`) before decoding,
    /// or found while decoding, which then stops.
    case tooLong(file: String, seconds: Double, maximumSeconds: Double, estimated: Bool)
    /// The bytes could not be read.
    case unreadable(file: String, reason: String)

    /// The stable machine-readable code of this error.
    public var code: ErrorCode {
        switch self {
        case .empty: .empty
        case .unsupportedFormat: .unsupportedFormat
        case .corrupt: .corrupt
        case .truncated: .truncated
        case .tooShort: .tooShort
        case .tooLong: .tooLong
        case .unreadable: .unreadable
        }
    }

    /// The file path, or the name of in-memory bytes.
    public var file: String {
        switch self {
        case .empty(let file), .unsupportedFormat(let file, _), .corrupt(let file, _),
             .truncated(let file, _, _), .tooShort(let file, _, _), .tooLong(let file, _, _, _),
             .unreadable(let file, _):
            file
        }
    }

    /// A sentence for people: the file, then the problem.
    public var description: String {
        switch self {
        case .empty(let file):
            "\(file): the file is empty (0 bytes)"
        case .unsupportedFormat(let file, let detail):
            "\(file): unsupported audio format: \(detail)"
        case .corrupt(let file, let message):
            "\(file): corrupt audio data: \(message)"
        case .truncated(let file, let seconds, let reason):
            "\(file): truncated after \(formatSeconds(seconds)) of audio (\(reason))"
        case .tooShort(let file, let seconds, let minimum):
            "\(file): too short: \(formatSeconds(seconds)) of audio, at least \(formatSeconds(minimum)) needed"
        case .tooLong(let file, let seconds, let maximum, let estimated):
            estimated
                ? "\(file): too long: the header says \(formatSeconds(seconds)), at most \(formatSeconds(maximum)) accepted"
                : "\(file): too long: more than \(formatSeconds(maximum)) of audio (decoding stopped at \(formatSeconds(seconds)))"
        case .unreadable(let file, let reason):
            "\(file): cannot read the file: \(reason)"
        }
    }
}

/// Something worth knowing about a song that decoded successfully.
public enum AudioWarning: Sendable, Equatable, CustomStringConvertible {
    /// The data ends before the header said it would, or the decoder stopped on damaged data;
    /// what was valid (`decodedSeconds`, at least the minimum length) is used.
    /// `expectedSeconds` is the header's claim when there is one.
    case truncated(decodedSeconds: Double, expectedSeconds: Double?, reason: String)

    /// The stable machine-readable code of this warning.
    public var code: ErrorCode {
        switch self {
        case .truncated: .truncated
        }
    }

    /// A sentence for people.
    public var description: String {
        switch self {
        case .truncated(let decoded, let expected, let reason):
            if let expected {
                "truncated: \(formatSeconds(decoded)) of audio decoded, the header announced \(formatSeconds(expected)) (\(reason))"
            } else {
                "truncated: \(formatSeconds(decoded)) of audio decoded (\(reason))"
            }
        }
    }
}

/// "12.35 s", or "1 h 02 min 03 s" for long durations.
func formatSeconds(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "\(seconds) s" }
    if seconds < 600 {
        return String(format: "%.2f s", seconds)
    }
    let total = Int(seconds.rounded())
    let hours = total / 3600, minutes = (total % 3600) / 60, rest = total % 60
    return hours > 0
        ? String(format: "%d h %02d min %02d s", hours, minutes, rest)
        : String(format: "%d min %02d s", minutes, rest)
}
