import Foundation
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

    /// The record of the file at `path`, `size` bytes of the coordinator's own (an upload's
    /// finished file), named `name` by its client, in messages too (the default reads its bytes
    /// whole and calls ``record(of:name:id:)``).
    func record(ofFileAt path: String, size: Int, name: String, id: SongID) throws(ErrorBody) -> SongRecord

    /// The SHA-256 of the bytes of `file`, below a library root: the song it holds (the default
    /// hashes it here, through its descriptor, in bounded pieces).
    func songID(of file: LibraryFile) throws(ErrorBody) -> SongID
}

extension SongProbe {
    public func record(of file: LibraryFile, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        let bytes: [UInt8]
        do throws(LibraryRootsError) {
            bytes = try file.read()
        } catch {
            throw ErrorBody(error)
        }
        var record = try record(of: bytes, name: name, id: id)
        record.byteSize = file.size
        return record
    }

    public func songID(of file: LibraryFile) throws(ErrorBody) -> SongID {
        do throws(LibraryRootsError) {
            return try file.songID()
        } catch {
            throw ErrorBody(error)
        }
    }

    public func record(ofFileAt path: String, size: Int, name: String, id: SongID) throws(ErrorBody) -> SongRecord {
        guard let data = FileManager.default.contents(atPath: path), data.count == size else {
            throw ErrorBody(code: .internal, message: "\(name): cannot read the uploaded song's file back")
        }
        return try record(of: [UInt8](data), name: name, id: id)
    }
}
