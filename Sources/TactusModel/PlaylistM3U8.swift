/// A playlist as an extended M3U file in UTF-8 (M3U8): `#EXTM3U`, then for each entry an
/// `#EXTINF:SECONDS,ARTIST - TITLE` line and the song's location.
///
/// The location of an entry is what `location` gives for its match (the gateway: its first path
/// under a library root, else the file name; by default the file name
/// the library stored, which players resolve next to the playlist file). Control characters in
/// titles and locations (a line break would start a new entry) are replaced by spaces.
///
/// ```swift
/// let text = PlaylistM3U8(playlist).text()
/// ```
public struct PlaylistM3U8: Sendable {
    public var playlist: Playlist
    /// The title of the playlist (`#PLAYLIST:`), if any.
    public var title: String?

    public init(_ playlist: Playlist, title: String? = nil) {
        self.playlist = playlist
        self.title = title
    }

    /// The M3U8 text, each line ended by a line feed.
    public func text(location: (TempoMatch) -> String = { $0.file }) -> String {
        var lines = ["#EXTM3U"]
        if let title { lines.append("#PLAYLIST:" + Self.line(title)) }
        for entry in playlist.entries {
            let match = entry.match
            let name: String
            switch (match.artist.flatMap { $0.isEmpty ? nil : $0 }, match.title.flatMap { $0.isEmpty ? nil : $0 }) {
            case (let artist?, let title?): name = "\(artist) - \(title)"
            case (nil, let title?): name = title
            default: name = match.file
            }
            let seconds = match.durationS.isFinite ? Int(match.durationS.rounded()) : -1
            lines.append("#EXTINF:\(seconds),\(Self.line(name))")
            lines.append(Self.line(location(match)))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` on one line: control characters (C0, DEL, C1, line and paragraph separators) become spaces.
    static func line(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            let value = scalar.value
            let control = value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            return control ? " " : scalar
        }))
    }
}
