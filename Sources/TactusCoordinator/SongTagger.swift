import TactusModel
import TactusStore

/// Reads and writes the BPM tags of the library's files under its roots, for the `tags` request.
///
/// The coordinator is given one (``Coordinator/init(configuration:probe:renderer:tagger:logger:)``)
/// and never links a tag library itself: `tactus serve` gives it one built on TactusTags
/// (TagLib). It is called on the coordinator's intake threads, one file at a time, with a file
/// the coordinator found below a library root; a failure is a report, never a thrown error.
public protocol SongTagger: Sendable {
    /// Imports the BPM tag of `file`, which the library says holds `song`, as the song's
    /// reference tempo (source `tag`), keeping one set by hand or from a CSV file unless `replace`.
    func read(file: String, song: SongID, replace: Bool, library: Library) -> TagReport

    /// Writes the library's tempo of `song` into the BPM tag of `file` (checked: the decoded
    /// audio must stay identical), the library's song then taking the new bytes' SHA-256 and
    /// its location the file's new size and modification time.
    func write(file: String, song: SongID, options: TagWriteOptions, library: Library) -> TagReport
}

/// How a `tags` request with `write` chooses and writes, as the coordinator hands it on.
public struct TagWriteOptions: Sendable, Hashable {
    /// The detector whose newest tempo is written; nil: the consensus.
    public var detector: String?
    public var minConfidence: Double
    public var dryRun: Bool
    public var backup: Bool

    public init(detector: String?, minConfidence: Double, dryRun: Bool, backup: Bool) {
        self.detector = detector
        self.minConfidence = minConfidence
        self.dryRun = dryRun
        self.backup = backup
    }
}
