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

    /// The most Unicode scalars (characters, accents counted apart) a text tag keeps: at most
    /// 4000 bytes of UTF-8. Tags are written by anyone who made or edited the file: a title of
    /// megabytes would make every listing of the library that holds it larger than a reply may
    /// be. No real title, artist, album or genre comes near this.
    public static let maxTextCharacters = 1000

    /// These tags with every text cut to ``maxTextCharacters`` (the cut ends with "…").
    public func bounded() -> AudioTags {
        AudioTags(
            title: Self.bounded(title), artist: Self.bounded(artist), album: Self.bounded(album), genre: Self.bounded(genre),
            year: year)
    }

    /// `text` cut to ``maxTextCharacters`` Unicode scalars, the last of them "…" when it was
    /// longer. Scalars, not characters: one character may hold any number of combining accents.
    public static func bounded(_ text: String?) -> String? {
        text.map { BoundedText.cut($0, toScalars: maxTextCharacters) }
    }

    /// True when no tag is present.
    public var isEmpty: Bool {
        title == nil && artist == nil && album == nil && genre == nil && year == nil
    }
}
