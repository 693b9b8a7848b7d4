import Foundation
import TactusModel

/// The body of a `stretch` request: a song of the library to render at another tempo, pitch kept,
/// or a playlist built from the library rendered as one continuous workout (section 3.7 of
/// SPEC.md). The coordinator answers at once with a ``RenderStatus``; the render runs on the server
/// and its file is downloaded with `render`.
public struct StretchRequest: WireBody {
    /// The song: its id, or a prefix of at least 8 hex digits (with ``bpm``; not with ``playlist``).
    public var song: String?
    /// The tempo to play the song at (20 to 400 BPM; rendered to 0.001 BPM).
    public var bpm: Double?
    /// A playlist query, as the `playlist` request takes, but without `tolerance`: its songs are
    /// chosen within ``maxStretchPct`` of each segment's cadence, and each is played at its segment's
    /// cadence, one continuous file with crossfades (not with ``song``).
    public var playlist: PlaylistQuery?
    /// The largest change of tempo allowed, in percent (default 8): a song further from `bpm`, even
    /// at half or double its tempo, is refused with `too-far` (a playlist does not choose it).
    public var maxStretchPct: Double?

    /// A song at a tempo.
    public init(song: String, bpm: Double, maxStretchPct: Double? = nil) {
        self.song = song
        self.bpm = bpm
        self.maxStretchPct = maxStretchPct
    }

    /// The song `song`, named by its id, at a tempo.
    public init(song: SongID, bpm: Double, maxStretchPct: Double? = nil) {
        self.init(song: song.hex, bpm: bpm, maxStretchPct: maxStretchPct)
    }

    /// A playlist rendered as one workout.
    public init(playlist: PlaylistQuery, maxStretchPct: Double? = nil) {
        self.playlist = playlist
        self.maxStretchPct = maxStretchPct
    }

    enum CodingKeys: String, CodingKey {
        case song, bpm, playlist, maxStretchPct = "max_stretch_pct"
    }

    /// The default of ``maxStretchPct``.
    public static let defaultMaxStretchPct = 8.0

    public func validate(command: String) throws(ProtocolError) {
        if let playlist {
            guard song == nil, bpm == nil else {
                throw .invalidBody(command: command, field: "playlist", detail: "give either song and bpm, or playlist")
            }
            guard playlist.tolerance == nil else {
                throw .invalidBody(
                    command: command, field: "playlist.tolerance", detail: "a rendered playlist's songs are chosen within max_stretch_pct")
            }
            try playlist.validate(command: command)
        } else {
            guard let song, let bpm else {
                throw .invalidBody(command: command, field: song == nil ? "song" : "bpm", detail: "give either song and bpm, or playlist")
            }
            try Check.song(song, command: command)
            try Check.finite(bpm, field: "bpm", in: 20...400, command: command)
        }
        if let maxStretchPct {
            try Check.finite(maxStretchPct, field: "max_stretch_pct", in: 0.1...50, command: command)
            // A playlist's songs lie within max_stretch_pct of each cadence, which the playlist takes under 50 %.
            guard playlist == nil || maxStretchPct < 50 else {
                throw .invalidBody(command: command, field: "max_stretch_pct", detail: "a playlist takes under 50 (got \(maxStretchPct))")
            }
        }
    }
}

/// The body of a `render` request: which render to report on, and to download when it is done.
public struct RenderRequest: WireBody {
    /// The id a `stretch` reply gave.
    public var render: String
    /// Where the piece of the file to send starts, in bytes: a done render's reply then carries
    /// the file from there, at most ``RenderRequest/maxPieceBytes``. Without it (a client older
    /// than pieces), the reply carries the whole file, which a server sends only up to
    /// ``RenderRequest/maxWholeBytes`` (`too-large` above), one such file at a time.
    public var offset: Int?

    /// The most bytes of a rendered file one reply to a request with `offset` carries: a render
    /// of a long workout is hundreds of megabytes, which the server reads a piece at a time.
    public static let maxPieceBytes = 2 << 20

    /// The largest file a server sends whole, to a request without `offset`: a song's render
    /// (a 3-minute stereo song at 44.1 kHz is about 32 MB), not a long workout's.
    public static let maxWholeBytes = 64 << 20

    public init(render: String, offset: Int? = nil) {
        self.render = render
        self.offset = offset
    }

    public func validate(command: String) throws(ProtocolError) {
        try RenderStatus.checkID(render, command: command)
        if let offset, offset < 0 {
            throw .invalidBody(command: command, field: "offset", detail: "must be at least 0 (got \(offset))")
        }
    }
}

/// Where a render is: the body of both the `stretch` and the `render` reply. A `render` reply
/// whose state is `done` carries the rendered WAV file in the frame after the body.
public struct RenderStatus: WireBody {
    /// A render's progress.
    public enum State: String, Sendable, Hashable, Codable {
        /// Waiting for a render thread, or rendering.
        case pending
        /// Rendered: the `render` reply carries the file.
        case done
        /// Failed for good; ``RenderStatus/error`` says why.
        case failed
    }

    /// The render's id: the song's id and the target tempo (or, for a playlist, a digest of its
    /// songs and tempi), so that asking for the same render again names the same one.
    public var render: String
    /// The song's full id (a song's render only).
    public var song: SongID?
    /// The song's tempo in the library (its consensus; a song's render only).
    public var sourceBPM: Double?
    /// 0.5, 1 or 2: the octave of the song's tempo that needs the least change (a song's render only).
    public var factor: Double?
    /// The tempo the song is played at (a song's render only).
    public var targetBPM: Double?
    /// How much faster the output plays than the song: target / (source × factor) (a song's render only).
    public var tempoRatio: Double?
    /// A playlist's render only: its songs in order, each with its tempo and the one it is played at.
    public var songs: [RenderedSong]?
    public var state: State
    /// With `failed`: why.
    public var error: ErrorBody?
    /// With `done`: the size of the WAV file, in bytes.
    public var bytes: Int?
    /// With `done`: the rendered file's duration.
    public var durationS: Double?
    /// With `done`: seconds spent rendering.
    public var renderS: Double?

    /// A song's render.
    public init(
        render: String, song: SongID, sourceBPM: Double, factor: Double, targetBPM: Double, tempoRatio: Double,
        state: State, error: ErrorBody? = nil, bytes: Int? = nil, durationS: Double? = nil, renderS: Double? = nil
    ) {
        self.render = render
        self.song = song
        self.sourceBPM = sourceBPM
        self.factor = factor
        self.targetBPM = targetBPM
        self.tempoRatio = tempoRatio
        self.state = state
        self.error = error
        self.bytes = bytes
        self.durationS = durationS
        self.renderS = renderS
    }

    /// A playlist's render.
    public init(render: String, songs: [RenderedSong], state: State) {
        self.render = render
        self.songs = songs
        self.state = state
    }

    enum CodingKeys: String, CodingKey {
        case render, song, sourceBPM = "source_bpm", factor, targetBPM = "target_bpm", tempoRatio = "tempo_ratio", songs, state, error
        case bytes, durationS = "duration_s", renderS = "render_s"
    }

    /// The id of the render of `song` at `bpm`: the song's first 16 hex digits and the tempo
    /// to 0.001 BPM (`3f9a3f9a3f9a3f9a-170.5`).
    public static func id(song: SongID, bpm: Double) -> String {
        "\(song.hex.prefix(16))-" + String(format: "%.3f", bpm).replacing(/\.?0+$/, with: "")
    }

    /// Render ids: 1 to 64 lowercase letters, digits, `.` and `-`.
    static func checkID(_ id: String, field: String = "render", command: String) throws(ProtocolError) {
        guard (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2E })
        else {
            throw .invalidBody(command: command, field: field, detail: "a render id is 1 to 64 lowercase letters, digits, '.' and '-'")
        }
    }

    /// The id of the render of a playlist: `playlist-` and 16 hex digits of a digest (FNV-1a) of its
    /// songs and tempi.
    public static func id(playlist songs: [RenderedSong]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in songs.map({ $0.song.hex + String(format: "@%.3f>%.3f;", $0.sourceBPM, $0.targetBPM) }).joined().utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return "playlist-" + String(format: "%016llx", hash)
    }

    public func validate(command: String) throws(ProtocolError) {
        try Self.checkID(render, command: command)
        if let songs {
            guard song == nil, sourceBPM == nil, factor == nil, targetBPM == nil, tempoRatio == nil, !songs.isEmpty else {
                throw .invalidBody(command: command, field: "songs", detail: "a playlist's render has songs and no song")
            }
        } else {
            guard song != nil, sourceBPM != nil, factor != nil, targetBPM != nil, tempoRatio != nil else {
                throw .invalidBody(
                    command: command, field: "song", detail: "a song's render has song, source_bpm, factor, target_bpm and tempo_ratio")
            }
        }
        guard (state == .failed) == (error != nil) else {
            throw .invalidBody(command: command, field: "error", detail: "present exactly when the state is failed")
        }
        guard (state == .done) == (bytes != nil) else {
            throw .invalidBody(command: command, field: "bytes", detail: "present exactly when the state is done")
        }
    }
}

/// A song of a playlist's render: its full id, its tempo at the octave that serves its segment and
/// the segment's cadence it is played at.
public struct RenderedSong: Sendable, Hashable, Codable {
    public var song: SongID
    /// The song's tempo in the library divided by the octave's factor.
    public var sourceBPM: Double
    public var targetBPM: Double

    public init(song: SongID, sourceBPM: Double, targetBPM: Double) {
        self.song = song
        self.sourceBPM = sourceBPM
        self.targetBPM = targetBPM
    }

    enum CodingKeys: String, CodingKey {
        case song, sourceBPM = "source_bpm", targetBPM = "target_bpm"
    }
}
