/// Whether a detector found a song's written tempo, as the tests judge it.
public enum TempoOctave {
    /// True when `found` is within `tolerance` (relative) of `bpm` times 1, 2 or 1/2: the
    /// written tempo or an octave of it. A song without a tempo (`nil`) matches nothing.
    ///
    /// ```swift
    /// TempoOctave.matches(241.2, 120)  // true: twice 120, within 1 %
    /// TempoOctave.matches(180, 120)    // false: 3/2 is not an octave
    /// ```
    public static func matches(_ found: Double?, _ bpm: Double, tolerance: Double = 0.01) -> Bool {
        guard let found else { return false }
        return [1.0, 2, 0.5].contains { abs(found - bpm * $0) <= tolerance * bpm * $0 }
    }
}
