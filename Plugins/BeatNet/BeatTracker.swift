import Foundation

/// Beat times from a beat activation: the hidden Markov model of the bar pointer, in the
/// efficient state space of Krebs, Böck and Widmer ("An efficient state-space model for
/// joint tempo and meter tracking", ISMIR 2015), here over one beat, decoded by Viterbi.
///
/// A state is a tempo (a beat interval of `n` whole frames, one per interval in `intervals`)
/// and a position `0..<n` within the beat. The position advances one frame per frame; at the
/// end of a beat the tempo may change, to interval `m` with probability proportional to
/// `exp(-transitionLambda * |m / n - 1|)`. The first `n / observationLambda` positions of a
/// beat are the beat region: there the activation `a` is the observation's likelihood,
/// elsewhere `(1 - a) / (observationLambda - 1)`.
///
/// Each tempo's positions are kept in a ring whose origin moves with time, so a frame costs
/// one addition per beat-region state and the tempo changes at the beat ends, not a pass over
/// every state; only the tempo chosen at each beat start is remembered for the way back.
/// Beats are the starts of the decoded path's beats, moved to the activation's highest frame
/// in that beat region.
struct BeatTracker {
    var transitionLambda = 100.0
    var observationLambda = 16.0

    /// The frames of the beats, ascending, for beat intervals in `intervals` (frames).
    func beats(_ activation: [Float], intervals: ClosedRange<Int>) -> [Int] {
        let count = activation.count
        guard count > 0, intervals.lowerBound >= 2, intervals.count <= Int(UInt8.max) else { return [] }
        let lengths = Array(intervals)
        var origins = [Int](), stateCount = 0
        for length in lengths {
            origins.append(stateCount)
            stateCount += length
        }
        let transitions = logTransitions(lengths)
        // The tempi a beat can come from: those whose transition is not negligible (e^-30).
        let sources = lengths.indices.map { target in
            let possible = lengths.indices.filter { transitions[$0 * lengths.count + target] > -30 }
            return (possible.first ?? target)...(possible.last ?? target)
        }
        let regions = lengths.map { max(1, Int(Double($0) / observationLambda)) }
        let floor = 1e-7
        let likelihood = { (frame: Int) -> (beat: Double, other: Double) in
            let a = min(max(Double(activation[frame]), floor), 1 - floor)
            return (log(a), log((1 - a) / (observationLambda - 1)))
        }
        // Stored scores: the true score of a state is its stored value plus `shared`, the sum
        // of the non-beat log-likelihoods so far.
        var score = [Double](repeating: -log(Double(stateCount)), count: stateCount)
        var shared = 0.0
        var chosen = [UInt8](repeating: 0, count: count * lengths.count)
        let slot = { (tempo: Int, position: Int, frame: Int) -> Int in
            let length = lengths[tempo]
            return origins[tempo] + ((position - frame) % length + length) % length
        }
        func observe(_ frame: Int) {
            let (beat, other) = likelihood(frame)
            shared += other
            for tempo in lengths.indices {
                for position in 0..<regions[tempo] { score[slot(tempo, position, frame)] += beat - other }
            }
        }
        observe(0)
        var ends = [Double](repeating: 0, count: lengths.count)
        for frame in 1..<max(count, 1) {
            for tempo in lengths.indices { ends[tempo] = score[slot(tempo, lengths[tempo] - 1, frame - 1)] }
            for target in lengths.indices {
                var best = -Double.infinity, from = 0
                for source in sources[target] {
                    let candidate = ends[source] + transitions[source * lengths.count + target]
                    if candidate > best {
                        best = candidate
                        from = source
                    }
                }
                score[slot(target, 0, frame)] = best
                chosen[frame * lengths.count + target] = UInt8(from)
            }
            observe(frame)
        }
        guard let last = score.indices.max(by: { score[$0] < score[$1] }) else { return [] }
        var tempo = origins.lastIndex { $0 <= last } ?? 0
        var position = ((last - origins[tempo]) + (count - 1)) % lengths[tempo]
        var frame = count - 1
        var starts = [(frame: Int, tempo: Int)]()
        while frame - position >= 0 {
            let start = frame - position
            starts.append((start, tempo))
            guard start > 0 else { break }
            tempo = Int(chosen[start * lengths.count + tempo])
            frame = start - 1
            position = lengths[tempo] - 1
        }
        return starts.reversed().map { start in
            let region = start.frame..<min(count, start.frame + regions[start.tempo])
            return region.max { activation[$0] < activation[$1] } ?? start.frame
        }
    }

    /// `log P(next interval | interval)`, row-major (`source * count + target`).
    private func logTransitions(_ lengths: [Int]) -> [Double] {
        var table = [Double](repeating: 0, count: lengths.count * lengths.count)
        for (source, from) in lengths.enumerated() {
            let weights = lengths.map { exp(-transitionLambda * abs(Double($0) / Double(from) - 1)) }
            let total = weights.reduce(0, +)
            for target in lengths.indices { table[source * lengths.count + target] = log(max(weights[target] / total, 1e-300)) }
        }
        return table
    }

    /// The beats (indices into `beats`) that begin bars, from the downbeat probability of each
    /// frame; empty when there are fewer than two bars of beats. Of the bar lengths 3 and 4 and
    /// their phases, the one whose beats carry the most downbeat probability on average.
    func downbeats(_ beats: [Int], downbeatProbability: [Float]) -> [Int] {
        guard beats.count >= 6, !downbeatProbability.isEmpty else { return [] }
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
