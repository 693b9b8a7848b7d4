import Foundation

/// Beat times from a beat activation once the tempo is known: dynamic programming after
/// Ellis (2007), "Beat tracking by dynamic programming". Each frame's score is its activation
/// (divided by the activation's standard deviation) plus the best score of a previous beat
/// between half and twice the beat period earlier, less `tightness` times the squared log
/// ratio of that interval to the period; the beats are the best path back from the last
/// period of the song.
///
/// Downbeats come from the network's downbeat probability at the beats: of the bar lengths 3
/// and 4 and their phases, the one whose beats carry the most downbeat probability on
/// average.
struct BeatTracker {
    var tightness = 100.0

    /// The frames of the beats, ascending. `period` is the beat period in frames.
    func beats(_ activation: [Float], period: Double) -> [Int] {
        let count = activation.count
        guard count > 0, period >= 2 else { return [] }
        let mean = activation.reduce(0.0) { $0 + Double($1) } / Double(count)
        let deviation = (activation.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(count)).squareRoot()
        guard deviation > 0 else { return [] }
        let shortest = max(1, Int((period / 2).rounded()))
        let longest = max(shortest, Int((2 * period).rounded()))
        let penalty = (shortest...longest).map { interval in tightness * pow(log(Double(interval) / period), 2) }
        var score = [Double](repeating: 0, count: count)
        var previous = [Int](repeating: -1, count: count)
        for frame in 0..<count {
            let local = Double(activation[frame]) / deviation
            var best = 0.0, from = -1
            for interval in stride(from: shortest, through: min(longest, frame), by: 1) {
                let candidate = score[frame - interval] - penalty[interval - shortest]
                if from < 0 || candidate > best {
                    best = candidate
                    from = frame - interval
                }
            }
            score[frame] = local + (from >= 0 ? max(best, 0) : 0)
            previous[frame] = from >= 0 && best > 0 ? from : -1
        }
        let tailStart = max(0, count - Int(period.rounded(.up)))
        guard var frame = (tailStart..<count).max(by: { score[$0] < score[$1] }) else { return [] }
        var path = [frame]
        while previous[frame] >= 0 {
            frame = previous[frame]
            path.append(frame)
        }
        return path.reversed()
    }

    /// The beats (indices into `beats`) that begin bars, from the downbeat probability of each
    /// frame; empty when there are fewer than two bars of beats.
    func downbeats(_ beats: [Int], downbeatProbability: [Float]) -> [Int] {
        guard beats.count >= 6 else { return [] }
        let atBeat = beats.map { frame in
            (max(0, frame - 1)...min(downbeatProbability.count - 1, frame + 1)).map { downbeatProbability[$0] }.max() ?? 0
        }
        var best: (mean: Float, length: Int, phase: Int)?
        for length in [3, 4] {
            for phase in 0..<length {
                let chosen = stride(from: phase, to: atBeat.count, by: length).map { atBeat[$0] }
                let mean = chosen.reduce(0, +) / Float(max(chosen.count, 1))
                if best == nil || mean > best!.mean { best = (mean, length, phase) }
            }
        }
        guard let best else { return [] }
        return Array(stride(from: best.phase, to: beats.count, by: best.length))
    }
}
