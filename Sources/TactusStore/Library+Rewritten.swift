import GRDB
import TactusModel

extension Library {
    /// Records that a song's file was rewritten without changing its audio (a tag written into
    /// it): the song, with its analyses, consensus and reference tempo, is now the SHA-256 of
    /// the new bytes, `new`, and `byteSize` long. Only one of its files got the new bytes: in
    /// the same transaction every present file of the song is distrusted as by
    /// ``rescanLocations(of:)`` (the next scan hashes it again rather than trusting its size and
    /// time), and the caller records the rewritten file's new size and time.
    ///
    /// Throws ``StoreError/unknownSong(_:)`` when `old` is not in the library, and
    /// ``StoreError/invalidValue(field:value:accepted:)`` when `new` already is (another copy of
    /// the new bytes was added); the library is then unchanged.
    public func songRewritten(_ old: SongID, as new: SongID, byteSize: Int) throws(StoreError) {
        guard byteSize >= 0 else { throw .invalidValue(field: "byte_size", value: "\(byteSize)", accepted: "a size >= 0") }
        guard old != new else { return }
        try write { db in
            let key = try Self.songKey(old, db)
            if try Int64.fetchOne(db, sql: "SELECT id FROM songs WHERE sha256 = ?", arguments: [new]) != nil {
                throw StoreError.invalidValue(field: "sha256", value: new.hex, accepted: "a song not yet in the library")
            }
            try db.execute(sql: "UPDATE songs SET sha256 = ?, byte_size = ? WHERE id = ?", arguments: [new, byteSize, key])
            try Self.distrustLocations(songKey: key, db)
        }
    }
}
