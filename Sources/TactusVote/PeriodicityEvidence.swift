/// What a detector measured about the periodicities of one window (or, summed, of a song),
/// as curves over a ``TempoGrid``: the evidence a ``MetricalDecision`` weighs.
///
/// Three curves, because a beat is one level of a hierarchy: `beat` says how strongly the
/// music repeats at each tempo; `grouping` is read at the slower levels (half, third of a
/// candidate tempo: bars, half bars) and `subdivision` at the faster ones (twice, three times
/// the tempo: eighths, triplets). A detector may take all three from one signal, or, for
/// example, `grouping` from the bands of kick and bass and `subdivision` from the hi-hats.
public struct PeriodicityEvidence: Sendable, Hashable {
    /// How periodic the window is at all, in 0...1 (1: perfectly periodic). Windows weaker
    /// than the vote's `minimumSalience` have no tempo of their own.
    public var strength: Double
    public var beat: [Double]
    public var grouping: [Double]
    public var subdivision: [Double]

    public init(strength: Double, beat: [Double], grouping: [Double], subdivision: [Double]) {
        precondition(beat.count == grouping.count && beat.count == subdivision.count)
        self.strength = strength
        self.beat = beat
        self.grouping = grouping
        self.subdivision = subdivision
    }

    /// Evidence whose three curves are the same curve.
    public init(strength: Double, curve: [Double]) {
        self.init(strength: strength, beat: curve, grouping: curve, subdivision: curve)
    }

    /// No periodicity anywhere on a grid of `count` tempi.
    public static func none(count: Int) -> PeriodicityEvidence {
        let zeros = [Double](repeating: 0, count: count)
        return PeriodicityEvidence(strength: 0, curve: zeros)
    }

    /// Adds `other` curve by curve (and its strength).
    public mutating func add(_ other: PeriodicityEvidence) {
        strength += other.strength
        for index in beat.indices {
            beat[index] += other.beat[index]
            grouping[index] += other.grouping[index]
            subdivision[index] += other.subdivision[index]
        }
    }

    /// Each curve divided by its largest value at the grid indices `range` (left as it is
    /// when that is not positive), so the three curves weigh alike whatever their scales.
    public func normalised(over range: Range<Int>) -> PeriodicityEvidence {
        func scaled(_ curve: [Double]) -> [Double] {
            let top = curve[range].max() ?? 0
            guard top > 0, top.isFinite else { return curve }
            return curve.map { $0 / top }
        }
        return PeriodicityEvidence(
            strength: strength, beat: scaled(beat), grouping: scaled(grouping), subdivision: scaled(subdivision))
    }
}
