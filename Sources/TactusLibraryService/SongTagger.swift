import TactusLibraryRoots
import TactusModel

/// The file part of BPM tags: a song's file, opened once with its folder (an
/// ``OpenFileInFolder``), its tag read, or a tag written into it safely, through those
/// descriptors only. ``LibraryTags`` does the library part around it.
///
/// `tactus serve` gives its coordinator one that runs each call in a service host process, so
/// TagLib and the decoders never parse a file in the coordinator's; `tactus tags --db` runs the
/// same code in its own process. A file that cannot be read or written is a ``TagFileProblem``.
public protocol SongTagger: Sendable {
    /// The BPM tag of `file`, and the SHA-256 of its bytes.
    func readTag(of file: OpenFileInFolder) throws(TagFileProblem) -> TagFileRead

    /// Writes `order.bpm` into the BPM tag of `file` when its bytes are still the song
    /// `order.song` and its decoded audio stays identical: the tag is written into a copy in the
    /// folder, which then replaces the file's name (with `order.dryRun`, only checked).
    func writeTag(_ order: TagWriteOrder, into file: OpenFileInFolder) throws(TagFileProblem) -> TagFileWritten
}

/// What a file's tag holds.
public struct TagFileRead: Sendable, Hashable, Codable {
    /// The SHA-256 of the file's bytes, as read.
    public var song: SongID
    /// The BPM tag's text, nil when there is none.
    public var tag: String?

    public init(song: SongID, tag: String?) {
        self.song = song
        self.tag = tag
    }
}

/// A BPM tag to write, as the library part chose it.
public struct TagWriteOrder: Sendable, Hashable, Codable {
    /// The tempo, in 1...1000.
    public var bpm: Double
    /// The song the library says the file holds: a file whose bytes are another is skipped.
    public var song: SongID
    /// Check the file and say what would be written, without writing.
    public var dryRun: Bool
    /// Keep the original as `NAME.bak` in its folder.
    public var backup: Bool

    public init(bpm: Double, song: SongID, dryRun: Bool, backup: Bool) {
        self.bpm = bpm
        self.song = song
        self.dryRun = dryRun
        self.backup = backup
    }

    enum CodingKeys: String, CodingKey {
        case bpm, song, dryRun = "dry_run", backup
    }
}

/// What a tag write did (or, in a dry run, would do).
public struct TagFileWritten: Sendable, Hashable, Codable {
    /// The tag fields written.
    public var fields: [TagField]
    /// Where the original was kept, as messages name it.
    public var backup: String?
    /// The file now at the name, nil in a dry run.
    public var rewritten: RewrittenFile?

    public init(fields: [TagField], backup: String? = nil, rewritten: RewrittenFile? = nil) {
        self.fields = fields
        self.backup = backup
        self.rewritten = rewritten
    }
}

/// A file as a tag write left it: what the library records of it.
public struct RewrittenFile: Sendable, Hashable, Codable {
    /// The SHA-256 of its new bytes.
    public var song: SongID
    public var byteSize: Int
    public var mtimeNs: Int64

    public init(song: SongID, byteSize: Int, mtimeNs: Int64) {
        self.song = song
        self.byteSize = byteSize
        self.mtimeNs = mtimeNs
    }

    enum CodingKeys: String, CodingKey {
        case song, byteSize = "byte_size", mtimeNs = "mtime_ns"
    }
}

/// Why a file's tag was not read or written: the file is skipped (its format holds no BPM
/// tag, its bytes are no longer the song) or failed (the reason names the file).
public struct TagFileProblem: Error, Sendable, Hashable, Codable {
    /// Whether the file is reported as skipped rather than failed.
    public var skipped: Bool
    public var reason: String
    /// A failure's machine-readable code (`read-only`, `audio-changed`, `worker-lost`...).
    public var code: ErrorCode?

    public init(skipped: Bool, reason: String, code: ErrorCode? = nil) {
        self.skipped = skipped
        self.reason = reason
        self.code = code
    }

    /// A file skipped for `reason`.
    public static func skip(_ reason: String) -> TagFileProblem {
        TagFileProblem(skipped: true, reason: reason)
    }

    /// A file skipped because its bytes are no longer the song `expected`.
    public static func contentChanged(from expected: SongID) -> TagFileProblem {
        skip("the file's content changed since it was analysed (it is no longer song \(expected.short)): scan or analyse it again")
    }

    /// The file's report for `song`: skipped or failed, with the reason.
    func report(file: String, song: SongID?) -> TagReport {
        var report = TagReport(file: file, song: song, outcome: skipped ? .skipped : .failed).because(reason)
        report.code = code
        return report
    }
}
