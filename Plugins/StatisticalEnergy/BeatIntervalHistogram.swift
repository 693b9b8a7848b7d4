import Foundation
import TactusVote

/// Patin stops at beats; this is the step from beats to a tempo: a soft histogram of the
/// intervals between beats (the inter-onset-interval clustering of Dixon 2001, with weights).
///
/// The beats of a beat-strength train are its local maxima within `peakSeconds` on either side
/// that stand above the train's mean over the surrounding second. Every pair of beats of a
/// window less than the grid's longest period apart adds the product of their strengths at
/// the tempo 60 / interval; the histogram is smoothed with a Gaussian of `smoothing` in log
/// tempo (0.02: 2 %, the timing spread of played music). Intervals spanning two, three or four
/// beats count too, so the histogram shows the bar and the half bar as well as the beat, as the
/// metrical decision needs.
struct BeatIntervalHistogram {
    struct Settings {
        /// Half-width of the neighbourhood a beat is the maximum of, in seconds.
        var peakSeconds: Double
        /// Standard deviation of the smoothing, in natural-log units of tempo.
        var smoothing: Double
    }

    /// A beat: its frame in the train and its strength.
    struct Beat {
        var frame: Int
        var strength: Double
    }

    /// One window's histogram on the grid.
    struct Window {
        /// The histogram divided by the total weight of its pairs: where the intervals lie.
        var density: [Double]
        /// The total weight of the window's pairs (0: no pair).
        var pairWeight: Double
    }

    private let beats: [[Beat]]
    private let grid: TempoGrid
    private let kernel: [Double]
    private let kernelArea: Double
    /// The grid position of the tempo of each interval between two beats, by its length in
    /// frames (index 0 unused), up to the longest interval that counts (the grid's slowest
    /// period): a table made once, for the pairs of every window.
    private let intervalPositions: [Double]

    init(beats: [[Beat]], rate: Double, grid: TempoGrid, settings: Settings) {
        self.beats = beats
        self.grid = grid
        let steps = settings.smoothing / (log(grid.bpms[1]) - log(grid.bpms[0]))
        let reach = max(1, Int((3 * steps).rounded(.up)))
        kernel = (-reach...reach).map { exp(-0.5 * pow(Double($0) / steps, 2)) }
        kernelArea = kernel.reduce(0, +)
        let longestInterval = 60 / grid.bpms[0]
        var positions = [Double.nan]
        while Double(positions.count) / rate <= longestInterval {
            positions.append(grid.position(ofBPM: 60 / (Double(positions.count) / rate)))
        }
        intervalPositions = positions
    }

    /// The beats of `train` (values per frame at `rate` frames per second).
    static func beats(in train: [Float], rate: Double, settings: Settings) -> [Beat] {
        let reach = max(1, Int(settings.peakSeconds * rate))
        let meanSpan = max(1, Int(rate))
        var prefix = [Double](repeating: 0, count: train.count + 1)
        for (index, value) in train.enumerated() { prefix[index + 1] = prefix[index] + Double(value) }
        var found: [Beat] = []
        for index in train.indices where train[index] > 0 {
            let value = train[index]
            let low = max(0, index - reach), high = min(train.count - 1, index + reach)
            var isMaximum = true
            for other in low...high where train[other] > value {
                isMaximum = false
                break
            }
            guard isMaximum else { continue }
            let start = max(0, index - meanSpan / 2), end = min(train.count, start + meanSpan)
            let mean = (prefix[end] - prefix[start]) / Double(end - start)
            if Double(value) > mean { found.append(Beat(frame: index, strength: Double(value))) }
        }
        return found
    }

    /// The histogram of band `band`'s beats within `frames`.
    func window(band: Int, frames: Range<Int>) -> Window {
        let all = beats[band]
        let first = firstIndex(in: all, atOrAfter: frames.lowerBound)
        var last = first
        while last < all.count && all[last].frame < frames.upperBound { last += 1 }
        var raw = [Double](repeating: 0, count: grid.count)
        var pairWeight = 0.0
        for i in first..<last {
            for j in (i + 1)..<last {
                let gap = all[j].frame - all[i].frame
                guard gap < intervalPositions.count else { break }
                let weight = all[i].strength * all[j].strength
                pairWeight += weight
                let position = intervalPositions[gap]
                guard position >= 0, position <= Double(grid.count - 1) else { continue }
                let lower = Int(position), fraction = position - Double(lower)
                raw[lower] += weight * (1 - fraction)
                if lower + 1 < grid.count { raw[lower + 1] += weight * fraction }
            }
        }
        guard pairWeight > 0 else { return Window(density: [Double](repeating: 0, count: grid.count), pairWeight: 0) }
        return Window(density: smoothed(raw).map { $0 / (pairWeight * kernelArea) }, pairWeight: pairWeight)
    }

    private func smoothed(_ values: [Double]) -> [Double] {
        let reach = kernel.count / 2
        var result = [Double](repeating: 0, count: values.count)
        for (index, value) in values.enumerated() where value != 0 {
            for (offset, weight) in kernel.enumerated() {
                let target = index + offset - reach
                if target >= 0 && target < result.count { result[target] += value * weight }
            }
        }
        return result
    }

    private func firstIndex(in beats: [Beat], atOrAfter frame: Int) -> Int {
        var low = 0, high = beats.count
        while low < high {
            let middle = (low + high) / 2
            if beats[middle].frame < frame { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
