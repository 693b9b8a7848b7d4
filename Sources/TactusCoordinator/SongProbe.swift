import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusStore

/// Reads what the library records about a submitted song from its bytes (format, codec,
/// signal shape, duration, tags), and refuses a song that cannot be analysed.
///
/// The coordinator is given one (``Coordinator/init(configuration:probe:renderer:logger:)``) and never
/// decodes audio itself: `tactus serve` gives it `AudioProbe` (TactusAudioProbe), built on
/// TactusAudio. It is called on the coordinator's intake threads, several songs at a time.
public protocol SongProbe: Sendable {
    /// The record of the song `bytes`, named `name` by its client and identified by `id`.
    /// A song that cannot be read throws an ``ErrorBody`` with the audio error's code and
    /// message, which the client gets as the answer to its submission.
    func record(of bytes: [UInt8], name: String, id: SongID) throws(ErrorBody) -> SongRecord

    /// The record of the file `file` below a library root, read through its open descriptor
    /// (the default reads its bytes whole and calls ``record(of:name:id:)``).
    func record(of file: LibraryFile, name: String, id: SongID) throws(ErrorBody) -> SongRecord
}

extension SongProbe {
    public func record(of file: LibraryFile, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        var record = try record(of: try file.read(), name: name, id: id)
        record.byteSize = file.size
        return record
    }
}
