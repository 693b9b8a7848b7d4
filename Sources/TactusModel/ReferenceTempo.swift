import Foundation

/// A tempo a person asserts for a song: the reference detectors are measured against.
public struct ReferenceTempo: Sendable, Hashable, Codable {
    public var song: SongID
    public var bpm: Double
    /// Where it comes from: `manual`, `csv:FILE-NAME` or `tag`.
    public var source: String
    public var setAt: Date

    /// Every field.
    public init(song: SongID, bpm: Double, source: String, setAt: Date) {
        self.song = song
        self.bpm = bpm
        self.source = source
        self.setAt = setAt
    }

    enum CodingKeys: String, CodingKey {
        case song, bpm, source, setAt = "set_at"
    }
}
