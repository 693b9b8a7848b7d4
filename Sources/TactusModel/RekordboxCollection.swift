import Foundation
import TactusDetector

/// Songs as a rekordbox XML collection (`DJ_PLAYLISTS` version 1.0.0, the format rekordbox
/// imports and other DJ programs read too): each song a `TRACK` of the `COLLECTION` with its
/// `Location` (a `file://localhost` URL), `Name`, `Artist`, `Kind`, `TotalTime`, `AverageBpm`
/// (the grid's tempo, else the consensus') and, when the song has a beat grid, one `TEMPO`
/// (`Inizio` its first beat in seconds, `Bpm`, `Metro` 4/4, `Battito` 1); then the playlists: every song in the order given, and a folder of
/// playlists by ten-BPM band of the consensus tempo.
///
/// Songs without an absolute path cannot be located by a DJ program: they are left out, each
/// with the reason.
public struct RekordboxCollection: Sendable {
    /// The songs, in playlist order.
    public var songs: [TempoMatch]
    /// The name of the playlist that holds every song.
    public var playlistName: String
    /// The exporting program's version, in `PRODUCT`.
    public var productVersion: String

    public init(_ songs: [TempoMatch], playlistName: String, productVersion: String) {
        self.songs = songs
        self.playlistName = playlistName
        self.productVersion = productVersion
    }

    /// A song left out of the collection, and why.
    public struct Omission: Sendable, Hashable {
        public var song: TempoMatch
        public var reason: String
    }

    /// What a collection holds: its tracks, those with a grid, and the songs left out.
    public struct Summary: Sendable, Hashable {
        public var tracks: Int
        public var withGrid: Int
        public var omitted: [Omission]
    }

    /// The collection's XML, and the songs left out.
    public func xml() -> (text: String, omitted: [Omission]) {
        var tracks: [(id: Int, song: TempoMatch, path: String)] = []
        var omitted: [Omission] = []
        for song in songs {
            guard let path = song.paths.first else {
                omitted.append(Omission(song: song, reason: "no known path (the library stores none for it: it was uploaded)"))
                continue
            }
            guard path.hasPrefix("/") else {
                omitted.append(Omission(song: song, reason: "its path '\(ShownText.escaped(path))' is not absolute"))
                continue
            }
            tracks.append((tracks.count + 1, song, path))
        }
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<DJ_PLAYLISTS Version="1.0.0">"#,
            "  <PRODUCT Name=\"Tactus\" Version=\"\(XMLText.escaped(productVersion))\" Company=\"Tactus\"/>",
            "  <COLLECTION Entries=\"\(tracks.count)\">",
        ]
        for track in tracks {
            lines.append(contentsOf: Self.trackLines(id: track.id, song: track.song, path: track.path))
        }
        lines.append("  </COLLECTION>")
        let bands = Dictionary(grouping: tracks) { Int(($0.song.bpm / 10).rounded(.down)) * 10 }
        lines.append("  <PLAYLISTS>")
        lines.append("    <NODE Type=\"0\" Name=\"ROOT\" Count=\"2\">")
        lines.append(contentsOf: Self.playlistLines(name: playlistName, ids: tracks.map(\.id), indent: "      "))
        lines.append("      <NODE Type=\"0\" Name=\"Tactus by tempo\" Count=\"\(bands.count)\">")
        for band in bands.keys.sorted() {
            let ids = bands[band, default: []].sorted { ($0.song.bpm, $0.id) < ($1.song.bpm, $1.id) }.map(\.id)
            lines.append(contentsOf: Self.playlistLines(name: "\(band)-\(band + 9) BPM", ids: ids, indent: "        "))
        }
        lines.append("      </NODE>")
        lines.append("    </NODE>")
        lines.append("  </PLAYLISTS>")
        lines.append("</DJ_PLAYLISTS>")
        return (lines.joined(separator: "\n") + "\n", omitted)
    }

    /// The collection's XML and what it holds (the command that writes it puts it in place:
    /// `tactus export`, through a temporary file that never replaces a library).
    public func contents() -> (text: String, summary: Summary) {
        let (text, omitted) = xml()
        let omittedSongs = Set(omitted.map(\.song.song))
        let withGrid = songs.filter { $0.beatGrid != nil && !omittedSongs.contains($0.song) }.count
        return (text, Summary(tracks: songs.count - omitted.count, withGrid: withGrid, omitted: omitted))
    }

    /// One `TRACK` of the collection, with its `TEMPO` when the song has a beat grid.
    static func trackLines(id: Int, song: TempoMatch, path: String) -> [String] {
        let name = song.title.flatMap { $0.isEmpty ? nil : $0 } ?? song.file
        let kind = (song.file as NSString).pathExtension.uppercased()
        var attributes = [
            ("TrackID", "\(id)"), ("Name", name), ("Artist", song.artist ?? ""),
            ("Kind", kind.isEmpty ? "" : kind + " File"),
            ("TotalTime", "\(song.durationS > 0 ? Int(exactly: song.durationS.rounded()) ?? 0 : 0)"),
            ("AverageBpm", String(format: "%.2f", song.beatGrid?.bpm ?? song.bpm)), ("Location", location(of: path)),
        ].map { "\($0.0)=\"\(XMLText.escaped($0.1))\"" }.joined(separator: " ")
        guard let grid = song.beatGrid else { return ["    <TRACK \(attributes)/>"] }
        attributes += ">"
        return [
            "    <TRACK \(attributes)",
            String(format: "      <TEMPO Inizio=\"%.3f\" Bpm=\"%.3f\" Metro=\"4/4\" Battito=\"1\"/>", grid.firstBeatS, grid.bpm),
            "    </TRACK>",
        ]
    }

    /// A playlist `NODE` of the tracks `ids` (by TrackID).
    static func playlistLines(name: String, ids: [Int], indent: String) -> [String] {
        ["\(indent)<NODE Type=\"1\" Name=\"\(XMLText.escaped(name))\" KeyType=\"0\" Entries=\"\(ids.count)\">"]
            + ids.map { "\(indent)  <TRACK Key=\"\($0)\"/>" }
            + ["\(indent)</NODE>"]
    }

    /// `file://localhost` and the absolute path, every byte but the unreserved characters of RFC
    /// 3986 and `/` percent-encoded (so a name with `#`, `?`, `%` or a control character survives).
    public static func location(of path: String) -> String {
        var text = "file://localhost"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                text.append(Character(Unicode.Scalar(byte)))
            default:
                text += String(format: "%%%02X", byte)
            }
        }
        return text
    }
}
