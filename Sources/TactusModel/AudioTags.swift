/// The descriptive tags of a song, where present. Text is always valid UTF-8, whatever
/// encoding the tag used (invalid bytes are replaced by U+FFFD).
public struct AudioTags: Hashable, Sendable, Codable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var genre: String?
    /// The year of the recording or release (the first four digits of a date tag).
    public var year: Int?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil, genre: String? = nil, year: Int? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.genre = genre
        self.year = year
    }

    /// True when no tag is present.
    public var isEmpty: Bool {
        title == nil && artist == nil && album == nil && genre == nil && year == nil
    }
}
