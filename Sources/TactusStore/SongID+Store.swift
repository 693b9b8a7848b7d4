import Foundation
import GRDB
import TactusModel

extension SongID {
    /// A song id read back from the library file. The schema guarantees 64 characters; a
    /// file edited by hand could still hold something else, which is an error, not a crash.
    static func stored(_ text: String) throws(StoreError) -> SongID {
        guard let id = SongID(text) else { throw .database("invalid song id '\(text)' in the library file") }
        return id
    }
}

/// A song id is bound to SQL as the 64 hex digits of `songs.sha256`, so queries take the id
/// itself: `arguments: [song]`.
///
/// Read ids back with ``SongID/stored(_:)``, never by decoding a row's value as `SongID`:
/// GRDB stops the process when a non-optional value does not decode, and a library file
/// edited by hand may hold anything.
extension SongID: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { hex.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> SongID? {
        String.fromDatabaseValue(dbValue).flatMap(SongID.init)
    }
}
