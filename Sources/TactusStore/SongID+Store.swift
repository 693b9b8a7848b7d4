import Foundation
import TactusModel

extension SongID {
    /// Hashes the file at `path` in 1 MiB pieces, reporting a failure as the library's own error.
    static func ofFile(atPath path: String) throws(StoreError) -> SongID {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw .unreadableFile(path: path, reason: "cannot open the file")
        }
        defer { try? file.close() }
        var hasher = Hasher()
        do {
            while let piece = try file.read(upToCount: 1 << 20), !piece.isEmpty {
                piece.withUnsafeBytes { hasher.update($0) }
            }
        } catch {
            throw .unreadableFile(path: path, reason: "\(error)")
        }
        return hasher.finalize()
    }

    /// A song id read back from the library file. The schema guarantees 64 characters; a
    /// file edited by hand could still hold something else, which is an error, not a crash.
    static func stored(_ text: String) throws(StoreError) -> SongID {
        guard let id = SongID(text) else { throw .database("invalid song id '\(text)' in the library file") }
        return id
    }
}
