import Foundation
import TactusModel

extension SongID {
    /// A song id read back from the library file. The schema guarantees 64 characters; a
    /// file edited by hand could still hold something else, which is an error, not a crash.
    static func stored(_ text: String) throws(StoreError) -> SongID {
        guard let id = SongID(text) else { throw .database("invalid song id '\(text)' in the library file") }
        return id
    }
}
