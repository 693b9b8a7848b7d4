import Foundation

/// Tempi evaluated by a periodicity analysis: log-spaced from `minBPM` to `maxBPM`, both
/// included, so every tempo has the same relative resolution (0.005 octave is about 0.35 %).
public struct TempoGrid: Sendable, Hashable {
    /// The tempi, increasing.
    public let bpms: [Double]
    private let logMinimum: Double
    private let logStep: Double

    public init(minBPM: Double, maxBPM: Double, stepOctaves: Double = 0.005) {
        precondition(minBPM > 0 && minBPM < maxBPM && stepOctaves > 0)
        let octaves = log2(maxBPM / minBPM)
        let steps = max(2, Int((octaves / stepOctaves).rounded(.up)))
        bpms = (0...steps).map { minBPM * pow(2, octaves * Double($0) / Double(steps)) }
        logMinimum = log(minBPM)
        logStep = log(maxBPM / minBPM) / Double(steps)
    }

    public var count: Int { bpms.count }

    /// The fractional index of `bpm` (outside `0...count - 1` when `bpm` is outside the grid).
    public func position(ofBPM bpm: Double) -> Double { (log(bpm) - logMinimum) / logStep }

    /// The tempo at fractional index `position`.
    public func bpm(atPosition position: Double) -> Double { exp(logMinimum + position * logStep) }

    /// A curve sampled on this grid, read at `bpm` by linear interpolation in log tempo; 0
    /// outside the grid.
    public func value(_ curve: [Double], atBPM bpm: Double) -> Double {
        let position = position(ofBPM: bpm)
        guard position >= 0, position <= Double(count - 1) else { return 0 }
        let lower = min(Int(position), count - 1)
        let upper = min(lower + 1, count - 1)
        let fraction = position - Double(lower)
        return curve[lower] * (1 - fraction) + curve[upper] * fraction
    }

    /// The indices of the grid tempi within `range`.
    public func indices(within range: ClosedRange<Double>) -> Range<Int> {
        let first = bpms.firstIndex { $0 >= range.lowerBound * (1 - 1e-9) } ?? count
        let end = bpms.lastIndex { $0 <= range.upperBound * (1 + 1e-9) }.map { $0 + 1 } ?? first
        return first..<max(first, end)
    }
}
