import TactusAudio
import TactusModel

/// Why a file's tags could not be read or written. Every case names the file, so the
/// description can be shown to a person as is. A failed write leaves the file as it was.
public enum TagError: CodedError, Sendable, Equatable {
    /// The file cannot be read, or its folder cannot take the temporary copy.
    case unreadable(path: String, reason: String)
    /// TagLib cannot open the file: not a format it knows by the file's extension, or damaged.
    case cannotOpen(path: String)
    /// The file's format holds no BPM tag Tactus writes (WAV, AIFF...).
    case unsupportedFormat(path: String, format: TagFormat)
    /// The file's bytes are `content` where its name says `named` (a FLAC named `.mp3`): TagLib
    /// would write the name's tag into it, so nothing is read or written.
    case misnamed(path: String, named: TagFormat, content: TagFormat)
    /// The file is read-only: Tactus does not change its permissions to write it.
    case readOnly(path: String)
    /// The file is not audio Tactus can decode, so the write could not be checked.
    case notAudio(path: String, reason: String)
    /// TagLib could not save the tags, or the checked copy could not replace the file.
    case writeFailed(path: String, reason: String)
    /// The audio decoded from the written copy differs from the original's: nothing was replaced.
    case audioChanged(path: String, reason: String)
    /// The file's name in its folder no longer refers to the file that was read (it was
    /// replaced, by a symbolic link or another file, while the copy was written): nothing was replaced.
    case changedWhileWritten(path: String)

    /// The file the error is about.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .cannotOpen(let path), .unsupportedFormat(let path, _), .misnamed(let path, _, _), .readOnly(let path),
             .notAudio(let path, _), .writeFailed(let path, _), .audioChanged(let path, _), .changedWhileWritten(let path):
            path
        }
    }

    /// A stable machine-readable code.
    public var code: ErrorCode {
        switch self {
        case .unreadable: .unreadable
        case .cannotOpen: .cannotOpen
        case .unsupportedFormat, .misnamed: .unsupportedFormat
        case .readOnly: .readOnly
        case .notAudio: .notAudio
        case .writeFailed: .writeFailed
        case .audioChanged: .audioChanged
        case .changedWhileWritten: .changedWhileWritten
        }
    }

    /// A sentence for people: the file, then the problem.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "\(path): cannot read the file: \(reason)"
        case .cannotOpen(let path):
            "\(path): TagLib cannot open the file (not a format it knows by its extension, or damaged)"
        case .unsupportedFormat(let path, let format):
            "\(path): unsupported format for BPM tags (\(format.rawValue)); MP3, FLAC, Ogg Vorbis, Opus and MP4 hold one"
        case .misnamed(let path, let named, let content):
            "\(path): its name says \(named.container) but its bytes are \(content.container): rename it to its format "
                + "(its tags are neither read nor written, which would put a \(named.container) tag into it)"
        case .readOnly(let path):
            "\(path): the file is read-only"
        case .notAudio(let path, let reason):
            "\(path): not audio Tactus can decode (\(reason)), so a write could not be checked"
        case .writeFailed(let path, let reason):
            "\(path): the tags could not be written: \(reason)"
        case .audioChanged(let path, let reason):
            "\(path): writing the tags would change the audio (\(reason)); the file was left as it was"
        case .changedWhileWritten(let path):
            "\(path): the file changed while it was written (its name now refers to another file or a link); nothing was replaced"
        }
    }
}

extension ErrorCode {
    // The failures of a tag read or write, by ``TagError/code``.
    static let cannotOpen = ErrorCode(rawValue: "cannot-open")
    static let readOnly = ErrorCode(rawValue: "read-only")
    static let notAudio = ErrorCode(rawValue: "not-audio")
    static let writeFailed = ErrorCode(rawValue: "write-failed")
    static let audioChanged = ErrorCode(rawValue: "audio-changed")
    static let changedWhileWritten = ErrorCode(rawValue: "changed-while-written")
}
