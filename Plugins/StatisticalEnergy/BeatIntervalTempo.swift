import Foundation

/// The tempo of a list of beat times, by clustering the intervals between them (Dixon's
/// inter-onset-interval clustering, the step Patin's detector leaves out).
///
/// Every interval between a beat and each of its next `span` beats that falls in the tempo
/// range adds a triangular kernel of half-width `tolerance` seconds to a histogram over
/// interval lengths. Beats are only known to a block (23 ms in Patin's detector), so an
/// interval of 23.5 blocks shows up as 23 and 24 blocks: the tolerance of one and a half
/// blocks gathers both. The best-supported interval is refined to the mean of the
/// intervals within `tolerance` of it, which is precise although each interval is not.
struct BeatIntervalTempo {
    struct Cluster {
        var bpm: Double
        /// Summed kernel support.
        var score: Double
        /// `score` as a fraction of all the intervals considered, in [0, 1].
        var share: Double
    }

    /// The strongest clusters, best first: at most five local maxima of the support, no two
    /// within `tolerance` of each other.
    let candidates: [Cluster]
    var best: Cluster? { candidates.first }

    init(beatTimes: [Double], bpmRange: ClosedRange<Double>, tolerance: Double, span: Int = 4) {
        let shortest = 60 / bpmRange.upperBound
        let longest = 60 / bpmRange.lowerBound
        var intervals: [Double] = []
        for (index, time) in beatTimes.enumerated() {
            for next in beatTimes[(index + 1)..<min(index + 1 + span, beatTimes.count)] {
                let interval = next - time
                if interval > longest + tolerance { break }
                if interval >= shortest - tolerance { intervals.append(interval) }
            }
        }
        guard !intervals.isEmpty, tolerance > 0 else {
            candidates = []
            return
        }
        let step = tolerance / 6
        let binCount = Int(((longest - shortest) / step).rounded(.up)) + 1
        var support = [Double](repeating: 0, count: binCount)
        for interval in intervals {
            let position = (interval - shortest) / step
            let reach = 6
            let centre = Int(position.rounded())
            for bin in max(0, centre - reach)...min(binCount - 1, max(0, centre + reach)) {
                let distance = abs(Double(bin) - position) / 6
                if distance < 1 { support[bin] += 1 - distance }
            }
        }
        var clusters: [(interval: Double, score: Double)] = []
        for bin in support.indices where support[bin] > 0 {
            let left = bin > 0 ? support[bin - 1] : 0
            let right = bin + 1 < binCount ? support[bin + 1] : 0
            guard support[bin] > left, support[bin] >= right else { continue }
            clusters.append((shortest + Double(bin) * step, support[bin]))
        }
        clusters.sort { $0.score > $1.score }
        var distinct: [(interval: Double, score: Double)] = []
        for cluster in clusters where distinct.count < 5 {
            // A weaker peak within the tolerance of a stronger one is its shoulder, not a tempo.
            if !distinct.contains(where: { abs($0.interval - cluster.interval) <= tolerance }) {
                distinct.append(cluster)
            }
        }
        let total = Double(intervals.count)
        candidates = distinct.map { cluster in
            let members = intervals.filter { abs($0 - cluster.interval) <= tolerance }
            let mean = members.isEmpty ? cluster.interval : members.reduce(0, +) / Double(members.count)
            let bpm = min(max(60 / mean, bpmRange.lowerBound), bpmRange.upperBound)
            return Cluster(bpm: bpm, score: cluster.score, share: min(1, cluster.score / total))
        }
    }
}
