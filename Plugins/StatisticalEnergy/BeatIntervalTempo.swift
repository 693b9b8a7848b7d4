import Foundation

/// The tempo of a list of beat times, by clustering the intervals between them (Dixon's
/// inter-onset-interval clustering, the step Patin's detector leaves out).
///
/// Every interval between a beat and each of its next `span` beats that falls in the tempo
/// range votes for its tempo with a triangular kernel `kernelWidth` wide (relative), on a
/// logarithmic grid. The best-supported tempo is then refined to the mean of the intervals
/// within `kernelWidth` of it, so beats quantised to blocks still give a precise tempo.
struct BeatIntervalTempo {
    struct Cluster {
        var bpm: Double
        /// Summed kernel support.
        var score: Double
        /// `score` as a fraction of all the intervals considered, in [0, 1].
        var share: Double
    }

    /// The strongest clusters, best first (at most five, local maxima of the support).
    let candidates: [Cluster]
    var best: Cluster? { candidates.first }

    init(beatTimes: [Double], bpmRange: ClosedRange<Double>, span: Int = 4, kernelWidth: Double = 0.04) {
        let shortest = 60 / bpmRange.upperBound
        let longest = 60 / bpmRange.lowerBound
        var intervals: [Double] = []
        for (index, time) in beatTimes.enumerated() {
            for next in beatTimes[(index + 1)..<min(index + 1 + span, beatTimes.count)] {
                let interval = next - time
                if interval > longest * (1 + kernelWidth) { break }
                if interval >= shortest * (1 - kernelWidth) { intervals.append(interval) }
            }
        }
        guard !intervals.isEmpty else {
            candidates = []
            return
        }
        // Support on a grid of 0.5 % steps in log-tempo.
        let step = log(1.005)
        let gridLow = log(bpmRange.lowerBound)
        let binCount = Int((log(bpmRange.upperBound) - gridLow) / step) + 1
        var support = [Double](repeating: 0, count: binCount)
        let reach = Int(ceil(kernelWidth / 0.005))
        for interval in intervals {
            let position = (log(60 / interval) - gridLow) / step
            let centre = Int(position.rounded())
            for bin in max(0, centre - reach)...min(binCount - 1, centre + reach) {
                let distance = abs(Double(bin) - position) * 0.005 / kernelWidth
                if distance < 1 { support[bin] += 1 - distance }
            }
        }
        let total = Double(intervals.count)
        var clusters: [Cluster] = []
        for bin in support.indices where support[bin] > 0 {
            let left = bin > 0 ? support[bin - 1] : 0
            let right = bin + 1 < binCount ? support[bin + 1] : 0
            guard support[bin] > left, support[bin] >= right else { continue }
            let centreBPM = exp(gridLow + Double(bin) * step)
            let members = intervals.filter { abs(60 / $0 - centreBPM) <= kernelWidth * centreBPM }
            let meanInterval = members.isEmpty ? 60 / centreBPM : members.reduce(0, +) / Double(members.count)
            let bpm = min(max(60 / meanInterval, bpmRange.lowerBound), bpmRange.upperBound)
            clusters.append(Cluster(bpm: bpm, score: support[bin], share: min(1, support[bin] / total)))
        }
        clusters.sort { $0.score > $1.score }
        candidates = Array(clusters.prefix(5))
    }
}
