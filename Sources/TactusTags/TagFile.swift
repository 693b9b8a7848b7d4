import CTagLib
import Foundation
import TactusLibraryRoots
import TactusModel

/// A file's container, as TagLib opens it (by the file's extension).
public enum TagFormat: String, Sendable, Hashable, Codable {
    case mp3, flac, oggVorbis = "ogg-vorbis", opus, mp4, other

    init(_ format: TactusTagsFormat) {
        switch format {
        case TACTUS_TAGS_FORMAT_MP3: self = .mp3
        case TACTUS_TAGS_FORMAT_FLAC: self = .flac
        case TACTUS_TAGS_FORMAT_OGG_VORBIS: self = .oggVorbis
        case TACTUS_TAGS_FORMAT_OPUS: self = .opus
        case TACTUS_TAGS_FORMAT_MP4: self = .mp4
        default: self = .other
        }
    }

    /// Whether Tactus writes a BPM tag in this format.
    public var holdsBPM: Bool { self != .other }

    /// The container, as a person names it (Ogg Vorbis and Opus are both Ogg).
    var container: String {
        switch self {
        case .mp3: "MP3"
        case .flac: "FLAC"
        case .oggVorbis, .opus: "Ogg"
        case .mp4: "MP4"
        case .other: "another format"
        }
    }
}

extension TagField {
    /// The fields a tempo is written as in `format`: an integer where the format asks for
    /// one (ID3v2 `TBPM`, MP4 `tmpo`), one decimal elsewhere; empty for formats without a BPM tag.
    public static func bpm(_ bpm: Double, in format: TagFormat) -> [TagField] {
        let integer = String(integerValue(bpm)), decimal = decimalText(bpm)
        return switch format {
        case .mp3: [TagField(name: "TBPM", value: integer), TagField(name: "TXXX:BPM", value: decimal)]
        case .flac, .oggVorbis, .opus: [TagField(name: "BPM", value: decimal)]
        case .mp4: [TagField(name: "tmpo", value: integer)]
        case .other: []
        }
    }

    static func integerValue(_ bpm: Double) -> Int32 { Int32(bpm.rounded()) }

    static func decimalText(_ bpm: Double) -> String { String(format: "%.1f", bpm) }
}

/// The tags Tactus reads from a file.
public struct FileTags: Sendable, Hashable {
    public var format: TagFormat
    /// The BPM tag as written (MP3: `TXXX:BPM` when present, else `TBPM`), nil when absent.
    public var bpmText: String?
    public var title: String?
    public var artist: String?

    /// The tag's tempo: the BPM text as a number in 1...1000, else nil (absent, or not a tempo).
    public var bpm: Double? { bpmText.flatMap(TagField.tempo(of:)) }
}

/// The tags of one file through TagLib, read through its open descriptor (never its path).
/// ``SafeTagWriter`` is the checked way to write a file people keep.
///
/// ```swift
/// let entry = try LibraryRoots.openEntry(atPath: "song.flac")
/// let tags = try TagFile.read(entry.descriptors)
/// print(tags.bpm ?? 0, tags.title ?? "")
/// ```
public enum TagFile {
    /// The file's format; throws when TagLib cannot open it.
    public static func format(of file: OpenFileInFolder) throws(TagError) -> TagFormat {
        try format(of: TagLibFile(file))
    }

    /// The BPM, title and artist tags of the file.
    public static func read(_ file: OpenFileInFolder) throws(TagError) -> FileTags {
        let target = TagLibFile(file)
        let format = try format(of: target)
        let bpm = try text(target) { tactus_tags_read_bpm(target.openPath, target.name, $0, $1, $2) }
        let title = try text(target) { tactus_tags_read_property(target.openPath, target.name, "TITLE", $0, $1, $2) }
        let artist = try text(target) { tactus_tags_read_property(target.openPath, target.name, "ARTIST", $0, $1, $2) }
        return FileTags(format: format, bpmText: AudioTags.bounded(bpm), title: AudioTags.bounded(title), artist: AudioTags.bounded(artist))
    }

    static func format(of target: TagLibFile) throws(TagError) -> TagFormat {
        if ContainerChunks.exceedsLimit(target.descriptor) {
            throw .unreadable(
                path: target.path,
                reason: "it holds more than \(ContainerChunks.limit) chunks, where a song has a handful; it is not given to TagLib")
        }
        var format = TACTUS_TAGS_FORMAT_OTHER
        var content = TACTUS_TAGS_FORMAT_OTHER
        let status = tactus_tags_format(target.openPath, target.name, &format, &content)
        if status == TACTUS_TAGS_MISNAMED {
            throw .misnamed(path: target.path, named: TagFormat(format), content: TagFormat(content))
        }
        try check(status, target.path)
        return TagFormat(format)
    }

    /// Writes `bpm` (in 1...1000) into `target` in place (see ``TagField/bpm(_:in:)``) and
    /// returns the fields written; every other tag stays as it was.
    static func writeBPM(_ bpm: Double, to target: TagLibFile) throws(TagError) -> [TagField] {
        let format = try format(of: target)
        guard format.holdsBPM else { throw .unsupportedFormat(path: target.path, format: format) }
        let status = tactus_tags_write_bpm(target.openPath, target.name, TagField.integerValue(bpm), TagField.decimalText(bpm))
        try check(status, target.path, format: format)
        return TagField.bpm(bpm, in: format)
    }

    /// One value read by `body` (buffer, capacity, found flag), growing the buffer when it is too small.
    private static func text(
        _ target: TagLibFile, _ body: (UnsafeMutablePointer<CChar>, Int, UnsafeMutablePointer<Int32>) -> TactusTagsStatus
    ) throws(TagError) -> String? {
        var capacity = 256
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            var found: Int32 = 0
            let status = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, capacity, &found) }
            if status == TACTUS_TAGS_VALUE_TOO_LONG && capacity < 1 << 20 {
                capacity *= 16
                continue
            }
            try check(status, target.path)
            return found != 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        }
    }

    private static func check(_ status: TactusTagsStatus, _ path: String, format: TagFormat = .other) throws(TagError) {
        switch status {
        case TACTUS_TAGS_OK: return
        case TACTUS_TAGS_CANNOT_OPEN: throw .cannotOpen(path: path)
        case TACTUS_TAGS_UNSUPPORTED: throw .unsupportedFormat(path: path, format: format)
        case TACTUS_TAGS_SAVE_FAILED: throw .writeFailed(path: path, reason: "TagLib could not save the file")
        case TACTUS_TAGS_VALUE_TOO_LONG: throw .unreadable(path: path, reason: "a tag value longer than 1 MiB")
        case TACTUS_TAGS_MISNAMED: throw .misnamed(path: path, named: format, content: .other)
        default: throw .writeFailed(path: path, reason: "TagLib failed (out of memory)")
        }
    }
}

/// A file as TagLib opens it: through its open descriptor (`/proc/self/fd/N`, which reaches the
/// file the descriptor holds whatever its name now is), its format known by the extension of
/// its own name; `path` names it in errors.
struct TagLibFile {
    var descriptor: Int32
    var name: String
    var path: String

    init(descriptor: Int32, name: String, path: String) {
        self.descriptor = descriptor
        self.name = name
        self.path = path
    }

    init(_ file: OpenFileInFolder) {
        self.init(descriptor: file.file, name: file.name, path: file.path)
    }

    var openPath: String { "/proc/self/fd/\(descriptor)" }
}
