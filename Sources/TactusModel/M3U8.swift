import Foundation

/// A playlist as a player opens it: extended M3U in UTF-8 (`#EXTM3U`, then per song an
/// `#EXTINF:SECONDS,ARTIST - TITLE` line and the song's path).
///
/// Paths are absolute, or relative to the playlist's folder (`../Music/a.flac`). A song whose
/// path is not known, or cannot be written on one line, is left out and returned, so the
/// caller can name it. Tags and file names are written on one line whatever they hold
/// (control characters become spaces), so no tag can add a line to the playlist.
///
/// ```swift
/// let m3u8 = M3U8([M3U8.Song(song: id, path: "/music/a.flac", durationS: 241.3, title: "A", artist: "B", file: "a.flac")])
/// let written = try m3u8.write(to: "/music/lists/run.m3u8", relative: true)   // ../a.flac
/// ```
public struct M3U8: Sendable, Hashable {
    /// One song of the playlist.
    public struct Song: Sendable, Hashable, Codable {
        public var song: SongID
        /// The song's absolute path, or nil when none is known.
        public var path: String?
        public var durationS: Double
        public var title: String?
        public var artist: String?
        /// The stored file name, shown when the song has no title.
        public var file: String

        /// Every field.
        public init(song: SongID, path: String?, durationS: Double, title: String?, artist: String?, file: String) {
            self.song = song
            self.path = path
            self.durationS = durationS
            self.title = title
            self.artist = artist
            self.file = file
        }

        /// A song found by a query or a playlist, at `path`.
        public init(_ match: TempoMatch, path: String?) {
            self.init(song: match.song, path: path, durationS: match.durationS, title: match.title, artist: match.artist, file: match.file)
        }

        /// What `#EXTINF` shows: `ARTIST - TITLE`, the title alone, or the file name.
        public var display: String {
            let title = Self.oneLine(self.title), artist = Self.oneLine(self.artist)
            switch (artist, title) {
            case (let artist?, let title?): return "\(artist) - \(title)"
            case (nil, let title?): return title
            default: return Self.oneLine(file) ?? song.hex
            }
        }

        /// `text` with control characters as spaces and outer spaces trimmed; nil when nothing is left.
        static func oneLine(_ text: String?) -> String? {
            guard let text else { return nil }
            let line = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
                .trimmingCharacters(in: .whitespaces)
            return line.isEmpty ? nil : line
        }

        enum CodingKeys: String, CodingKey {
            case song, path, durationS = "duration_s", title, artist, file
        }
    }

    /// Why a song was left out of the playlist file.
    public struct Omission: Sendable, Hashable, Codable {
        public var song: Song
        public var reason: String

        public init(song: Song, reason: String) {
            self.song = song
            self.reason = reason
        }

        enum CodingKeys: String, CodingKey {
            case song, reason
        }
    }

    /// What was written: the file, how many songs it lists, and those left out.
    public struct Written: Sendable, Hashable, Codable {
        public var path: String
        public var songs: Int
        public var omitted: [Omission]

        public init(path: String, songs: Int, omitted: [Omission]) {
            self.path = path
            self.songs = songs
            self.omitted = omitted
        }

        enum CodingKeys: String, CodingKey {
            case path, songs, omitted
        }
    }

    public var songs: [Song]
    /// The playlist's name (`#PLAYLIST:`), if any.
    public var title: String?

    public init(_ songs: [Song], title: String? = nil) {
        self.songs = songs
        self.title = title
    }

    /// An M3U comment line (`# text`): players skip it. Control characters become spaces.
    public static func comment(_ text: String) -> String {
        "# " + (Song.oneLine(text) ?? "")
    }

    /// The playlist's text for a file in `folder` (an absolute path): paths relative to it
    /// when `relative`, absolute otherwise; and the songs left out.
    public func text(inFolder folder: String, relative: Bool) -> (text: String, omitted: [Omission]) {
        var lines = ["#EXTM3U"]
        if let title = Song.oneLine(title) { lines.append("#PLAYLIST:" + title) }
        var omitted = [Omission]()
        for song in songs {
            guard let path = song.path else {
                omitted.append(Omission(song: song, reason: "no known path (the library stores none for it)"))
                continue
            }
            guard path.hasPrefix("/") else {
                omitted.append(Omission(song: song, reason: "its path '\(path)' is not absolute"))
                continue
            }
            guard !path.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else {
                omitted.append(Omission(song: song, reason: "its path holds a line break, which M3U cannot hold"))
                continue
            }
            let seconds = song.durationS.isFinite && song.durationS > 0 ? Int(song.durationS.rounded()) : -1
            lines.append("#EXTINF:\(seconds),\(song.display)")
            lines.append(relative ? Self.relativePath(of: path, from: folder) : path)
        }
        return (lines.joined(separator: "\n") + "\n", omitted)
    }

    /// A playlist file that could not be written.
    public struct WriteError: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var reason: String

        public var description: String { "\(path): cannot write the playlist: \(reason)" }
    }

    /// Writes the playlist to `path` (through a temporary file in its folder, renamed over it).
    public func write(to path: String, relative: Bool) throws(WriteError) -> Written {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent().path
        let (text, omitted) = self.text(inFolder: folder, relative: relative)
        if let refusal = OutputPath.refusal(url.path) { throw WriteError(path: path, reason: refusal) }
        do {
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw WriteError(path: path, reason: error.localizedDescription)
        }
        return Written(path: url.path, songs: songs.count - omitted.count, omitted: omitted)
    }

    /// `path` relative to `folder` (both absolute): `a.flac`, `sub/a.flac`, `../Music/a.flac`.
    /// A relative path that would start with `#` (a comment in M3U) starts with `./`.
    public static func relativePath(of path: String, from folder: String) -> String {
        let target = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        let base = URL(fileURLWithPath: folder, isDirectory: true).standardizedFileURL.pathComponents
        var common = 0
        while common < min(target.count - 1, base.count) && target[common] == base[common] { common += 1 }
        let parts = Array(repeating: "..", count: base.count - common) + target[common...]
        let relative = parts.joined(separator: "/")
        return relative.hasPrefix("#") ? "./" + relative : relative
    }
}
