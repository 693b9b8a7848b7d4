/// A constant beat grid: a beat every `60 / bpm` seconds, one of them at `firstBeatS`. What DJ
/// software calls a beat grid, for songs whose beats no detector tracked: its tempo is the
/// consensus tempo fitted to the song's onsets, its phase where those onsets are strongest.
///
/// Encoded as `{"kind": "constant", "bpm", "first_beat_s", "clarity"}`; `kind` says how the grid
/// was made, so that a reader can tell it from tracked beats.
public struct BeatGrid: Sendable, Hashable, Codable {
    /// How a constant grid is marked on the wire and in the library.
    public static let constantKind = "constant"

    /// The grid's tempo: within 1.5 % of the consensus tempo it was fitted from.
    public var bpm: Double
    /// The first beat, in `0..<60 / bpm` seconds from the start of the song.
    public var firstBeatS: Double
    /// How clearly the song's onsets fall on the grid: their mean strength on the grid's beats
    /// over their mean strength at every phase of the same period (1: no preference).
    public var clarity: Double

    public init(bpm: Double, firstBeatS: Double, clarity: Double) {
        self.bpm = bpm
        self.firstBeatS = firstBeatS
        self.clarity = clarity
    }

    /// Seconds between beats.
    public var periodS: Double { 60 / bpm }

    /// The beat times from the first beat to `duration` seconds (excluded).
    public func beats(until duration: Double) -> [Double] {
        guard bpm > 0, bpm.isFinite, duration.isFinite, firstBeatS < duration,
            let count = Int(exactly: ((duration - firstBeatS) / periodS).rounded(.up))
        else { return [] }
        return (0..<max(count, 0)).map { firstBeatS + Double($0) * periodS }
    }

    enum CodingKeys: String, CodingKey {
        case kind, bpm, firstBeatS = "first_beat_s", clarity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        guard kind == Self.constantKind else {
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "a beat grid's kind is \"\(Self.constantKind)\"")
        }
        bpm = try container.decode(Double.self, forKey: .bpm)
        firstBeatS = try container.decode(Double.self, forKey: .firstBeatS)
        clarity = try container.decode(Double.self, forKey: .clarity)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.constantKind, forKey: .kind)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(firstBeatS, forKey: .firstBeatS)
        try container.encode(clarity, forKey: .clarity)
    }

    /// Whether the grid still belongs to a song whose consensus is `bpm`: fitted near it
    /// (``tempoRange``). A grid fitted before the song's consensus moved to another tempo is not.
    public func agrees(withConsensus bpm: Double?) -> Bool {
        guard let bpm, bpm > 0 else { return false }
        return abs(self.bpm / bpm - 1) <= Self.tempoRange
    }

    /// A grid's tempo is fitted within this fraction of the consensus tempo.
    public static let tempoRange = 0.015

    /// Why a grid from elsewhere (a worker, a file) is not one: nil when every field is in range.
    public var problem: String? {
        guard bpm.isFinite, (1...1_000).contains(bpm) else { return "bpm \(bpm) is not in 1...1000" }
        guard firstBeatS.isFinite, firstBeatS >= 0, firstBeatS < periodS + 1e-9 else {
            return "first_beat_s \(firstBeatS) is not within one beat (0..<\(periodS) s)"
        }
        guard clarity.isFinite, clarity >= 0, clarity <= 1e6 else { return "clarity \(clarity) is not in 0...1e6" }
        return nil
    }
}
