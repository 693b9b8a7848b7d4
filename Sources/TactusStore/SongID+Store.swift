import TactusAudio

extension SongID {
    /// Hashes the file at `path`, reporting a failure as the library's own error.
    static func ofFile(atPath path: String) throws(StoreError) -> SongID {
        do {
            return try SongID(of: .file(path))
        } catch {
            throw .unreadableFile(path: path, reason: error.description)
        }
    }

    /// A song id read back from the library file. The schema guarantees 64 characters; a
    /// file edited by hand could still hold something else, which is an error, not a crash.
    static func stored(_ text: String) throws(StoreError) -> SongID {
        guard let id = SongID(text) else { throw .database("invalid song id '\(text)' in the library file") }
        return id
    }
}
