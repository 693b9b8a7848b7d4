import Foundation

/// The standard scores of a beat tracker against annotated beats (Davies, Degara and Plumbley,
/// "Evaluation methods for musical audio beat tracking algorithms", C4DM-TR-09-06, 2009, as
/// the MIREX beat-tracking task uses them): the F-measure with a +-70 ms window, and the
/// continuity measures of Hainsworth (2004) and Klapuri et al. (2006), CMLt (at the annotated
/// metrical level) and AMLt (also at double tempo, half tempo on either beat, or the
/// off-beat), both with phase and period tolerances of 17.5 % of the annotated beat interval.
/// Beats before `skipSeconds` (5 s in MIREX) are left out of both sequences first.
struct BeatScore {
    var fMeasure: Double
    var cmlt: Double
    var amlt: Double

    static let window = 0.07
    static let tolerance = 0.175
    static let skipSeconds = 5.0

    init(estimated: [Double], annotated: [Double]) {
        let estimates = estimated.filter { $0 >= Self.skipSeconds }
        let annotations = annotated.filter { $0 >= Self.skipSeconds }
        fMeasure = Self.fMeasure(estimates, annotations)
        cmlt = Self.continuity(estimates, annotations)
        amlt = Self.variations(of: annotations).map { Self.continuity(estimates, $0) }.max() ?? 0
    }

    /// Matches each annotation with at most one estimate within the window, nearest first
    /// (both sequences ascending, so a greedy sweep is optimal), and returns 2PR / (P + R).
    static func fMeasure(_ estimates: [Double], _ annotations: [Double]) -> Double {
        guard !estimates.isEmpty, !annotations.isEmpty else { return estimates.isEmpty && annotations.isEmpty ? 1 : 0 }
        var hits = 0, next = 0
        for annotation in annotations {
            while next < estimates.count, estimates[next] < annotation - window { next += 1 }
            if next < estimates.count, abs(estimates[next] - annotation) <= window {
                hits += 1
                next += 1
            }
        }
        let precision = Double(hits) / Double(estimates.count)
        let recall = Double(hits) / Double(annotations.count)
        return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0
    }

    /// The fraction of correct estimates, normalised by the longer of the two sequences: an
    /// estimate is correct when it lies within the tolerance of its nearest annotation, its
    /// interval to the previous estimate (the next, for the first) is within the tolerance of
    /// that annotation's interval, and the previous estimate is near the previous annotation.
    static func continuity(_ estimates: [Double], _ annotations: [Double]) -> Double {
        guard estimates.count >= 2, annotations.count >= 2 else { return 0 }
        var correct = 0
        var previousNearest = -2
        for (index, estimate) in estimates.enumerated() {
            let nearest = nearestIndex(of: estimate, in: annotations)
            let interval = nearest > 0 ? annotations[nearest] - annotations[nearest - 1] : annotations[1] - annotations[0]
            let estimatedInterval = index > 0 ? estimate - estimates[index - 1] : estimates[1] - estimates[0]
            let inPhase = abs(estimate - annotations[nearest]) < tolerance * interval
            let inPeriod = abs(estimatedInterval - interval) < tolerance * interval
            let continues = index == 0 || previousNearest == nearest - 1
            if inPhase && inPeriod && continues { correct += 1 }
            previousNearest = inPhase ? nearest : -2
        }
        return Double(correct) / Double(max(estimates.count, annotations.count))
    }

    /// The annotations at the allowed metrical levels: as annotated, off-beat, double tempo,
    /// and half tempo on the odd and on the even beats.
    static func variations(of annotations: [Double]) -> [[Double]] {
        guard annotations.count >= 2 else { return [annotations] }
        let offBeats = zip(annotations, annotations.dropFirst()).map { ($0 + $1) / 2 }
        var double = [Double]()
        for (beat, offBeat) in zip(annotations, offBeats) { double += [beat, offBeat] }
        double.append(annotations[annotations.count - 1])
        let odd = stride(from: 0, to: annotations.count, by: 2).map { annotations[$0] }
        let even = stride(from: 1, to: annotations.count, by: 2).map { annotations[$0] }
        return [annotations, offBeats, double, odd, even]
    }

    private static func nearestIndex(of time: Double, in sorted: [Double]) -> Int {
        var low = 0, high = sorted.count - 1
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < time { low = middle + 1 } else { high = middle }
        }
        if low > 0, abs(sorted[low - 1] - time) <= abs(sorted[low] - time) { return low - 1 }
        return low
    }
}
