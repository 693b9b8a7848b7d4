import CTagLib
import Foundation
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
    public var bpm: Double? {
        guard let text = bpmText?.trimmingCharacters(in: .whitespaces), let value = Double(text),
            (1...1000).contains(value)
        else { return nil }
        return value
    }
}

/// The tags of one file through TagLib, read or written in place. ``SafeTagWriter`` is the
/// checked way to write a file people keep; this type is its TagLib step.
///
/// ```swift
/// let tags = try TagFile.read("song.flac")
/// print(tags.bpm ?? 0, tags.title ?? "")
/// ```
public enum TagFile {
    /// The file's format; throws when TagLib cannot open it.
    public static func format(of path: String) throws(TagError) -> TagFormat {
        try checkReadable(path)
        var format = TACTUS_TAGS_FORMAT_OTHER
        try check(tactus_tags_format(path, &format), path)
        return TagFormat(format)
    }

    /// The BPM, title and artist tags of the file at `path`.
    public static func read(_ path: String) throws(TagError) -> FileTags {
        let format = try format(of: path)
        let bpm = try text(path) { tactus_tags_read_bpm(path, $0, $1, $2) }
        let title = try text(path) { tactus_tags_read_property(path, "TITLE", $0, $1, $2) }
        let artist = try text(path) { tactus_tags_read_property(path, "ARTIST", $0, $1, $2) }
        return FileTags(format: format, bpmText: bpm, title: title, artist: artist)
    }

    /// Writes `bpm` (in 1...1000) into the file at `path` in place (see ``TagField/bpm(_:in:)``)
    /// and returns the fields written; every other tag stays as it was.
    @discardableResult
    public static func writeBPM(_ bpm: Double, to path: String) throws(TagError) -> [TagField] {
        let format = try format(of: path)
        let fields = TagField.bpm(bpm, in: format)
        guard format.holdsBPM else { throw .unsupportedFormat(path: path, format: format) }
        guard isWritable(path) else { throw .readOnly(path: path) }
        try check(tactus_tags_write_bpm(path, TagField.integerValue(bpm), TagField.decimalText(bpm)), path, format: format)
        return fields
    }

    /// Whether the file may be written: the process may write it, and its owner's write
    /// permission is set (checked too because the superuser may write any file).
    static func isWritable(_ path: String) -> Bool {
        let permissions = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? 0
        return FileManager.default.isWritableFile(atPath: path) && permissions & 0o200 != 0
    }

    private static func checkReadable(_ path: String) throws(TagError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .missing(path: path) }
        guard !isDirectory.boolValue else { throw .unreadable(path: path, reason: "a folder, not a file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadable(path: path, reason: "permission denied")
        }
    }

    /// One value read by `body` (buffer, capacity, found flag), growing the buffer when it is too small.
    private static func text(
        _ path: String, _ body: (UnsafeMutablePointer<CChar>, Int, UnsafeMutablePointer<Int32>) -> TactusTagsStatus
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
            try check(status, path)
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
        default: throw .writeFailed(path: path, reason: "TagLib failed (out of memory)")
        }
    }
}
