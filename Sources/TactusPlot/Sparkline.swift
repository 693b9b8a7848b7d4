import Foundation
import TactusDetector

/// Word-sized charts for a terminal: one Unicode block character per column, `▁` for the
/// lowest value up to `█` for the highest, a space where there is no value.
///
/// ```swift
/// Sparkline.line([0, 1, 2, 3, 4, 5, 6, 7])   // "▁▂▃▄▅▆▇█"
/// ```
public enum Sparkline {
    /// The eight levels, lowest first.
    public static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// One character per value, scaled so that `range` (default: the values' own minimum
    /// and maximum) spans the eight levels; values outside it are clamped. When every value
    /// is the same, all are drawn at the middle level. Nil and non-finite values are spaces.
    public static func line(_ values: [Double?], range: ClosedRange<Double>? = nil) -> String {
        let finite = values.compactMap { $0 }.filter(\.isFinite)
        guard let low = range?.lowerBound ?? finite.min(), let high = range?.upperBound ?? finite.max() else {
            return String(repeating: " ", count: values.count)
        }
        return String(values.map { value -> Character in
            guard let value, value.isFinite else { return " " }
            guard high > low else { return blocks[3] }
            let share = (min(max(value, low), high) - low) / (high - low)
            return blocks[Int((share * Double(blocks.count - 1)).rounded())]
        })
    }

    /// The envelope resampled to `columns` columns spanning `durationS` seconds: the level in
    /// dB (10·log10) of the mean energy of the values in each column, nil for a column with none.
    public static func columns(of envelope: EnergyEnvelope, durationS: Double, columns: Int) -> [Double?] {
        guard columns > 0, durationS > 0 else { return [] }
        var sums = [Double](repeating: 0, count: columns), counts = [Int](repeating: 0, count: columns)
        for (index, value) in envelope.values.enumerated() where value.isFinite {
            let column = Int((Double(index) + 0.5) * envelope.hopS / durationS * Double(columns))
            guard (0..<columns).contains(column) else { continue }
            sums[column] += max(Double(value), 0)
            counts[column] += 1
        }
        return (0..<columns).map { counts[$0] == 0 ? nil : 10 * log10(max(sums[$0] / Double(counts[$0]), 1e-12)) }
    }

    /// The windows' tempi resampled to `columns` columns spanning `durationS` seconds: in each
    /// column, the tempo of the window whose centre is nearest to the column's centre among
    /// the windows covering it; nil where no window covers the column or that window has no tempo.
    public static func columns(of windows: [AnalysisWindow], durationS: Double, columns: Int) -> [Double?] {
        guard columns > 0, durationS > 0 else { return [] }
        return (0..<columns).map { column in
            let time = (Double(column) + 0.5) / Double(columns) * durationS
            let covering = windows.filter { $0.startS <= time && time <= $0.startS + $0.durationS }
            let nearest = covering.min { abs($0.startS + $0.durationS / 2 - time) < abs($1.startS + $1.durationS / 2 - time) }
            return nearest?.bpm
        }
    }
}
