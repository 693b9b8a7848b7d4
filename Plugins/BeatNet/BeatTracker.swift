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
/// one addition per beat-region state and the tempo changes at the beat ends (``TempoChoices``,
/// four target tempi at a time), not a pass over every state; only the tempo chosen at each
/// beat start is remembered for the way back.
/// Beats are the starts of the decoded path's beats, moved to the activation's highest frame
/// in that beat region.
struct BeatTracker {
    var transitionLambda = 1_000.0
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
        let choices = TempoChoices(logTransitions(lengths), tempi: lengths.count)
        let regions = lengths.map { max(1, Int(Double($0) / observationLambda)) }
        let floor = 1e-7
        let likelihood = { (frame: Int) -> (beat: Double, other: Double) in
            let a = min(max(Double(activation[frame]), floor), 1 - floor)
            return (log(a), log((1 - a) / (observationLambda - 1)))
        }
        // Stored scores: the true score of a state is its stored value plus `shared`, the sum
        // of the non-beat log-likelihoods so far. The state written every frame is held in
        // buffers rather than arrays, which would check at each write that they are not shared.
        let score = UnsafeMutableBufferPointer<Double>.allocate(capacity: stateCount)
        score.initialize(repeating: -log(Double(stateCount)))
        var shared = 0.0
        let chosen = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: count * lengths.count)
        chosen.initialize(repeating: 0)
        // Position 0 of tempo `t` at the current frame is the slot `origins[t] + heads[t]`, and
        // position `p` the slot `p` further on around the ring: `(p - frame) mod length`.
        let heads = UnsafeMutableBufferPointer<Int>.allocate(capacity: lengths.count)
        heads.initialize(repeating: 0)
        let ends = UnsafeMutableBufferPointer<Double>.allocate(capacity: lengths.count)
        ends.initialize(repeating: 0)
        defer {
            score.deallocate()
            chosen.deallocate()
            heads.deallocate()
            ends.deallocate()
        }
        func observe(_ frame: Int) {
            let (beat, other) = likelihood(frame)
            shared += other
            for tempo in lengths.indices {
                let origin = origins[tempo], length = lengths[tempo]
                var slot = heads[tempo]
                for _ in 0..<regions[tempo] {
                    score[origin + slot] += beat - other
                    slot += 1
                    if slot == length { slot = 0 }
                }
            }
        }
        observe(0)
        for frame in 1..<max(count, 1) {
            // The ring turns: the last position of the previous frame is position 0 of this one.
            for tempo in lengths.indices {
                heads[tempo] = heads[tempo] == 0 ? lengths[tempo] - 1 : heads[tempo] - 1
                ends[tempo] = score[origins[tempo] + heads[tempo]]
            }
            choices.best(UnsafeBufferPointer(ends)) { target, best, source in
                score[origins[target] + heads[target]] = best
                chosen[frame * lengths.count + target] = UInt8(source)
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

/// The Viterbi step at the beat ends: for each target tempo, the best of the source tempi's
/// beat-end scores plus the transition's log-probability, and that source (the first of equal
/// ones, in source order). The sources of a target are the tempi whose transition to it is not
/// negligible (above e^-30), with those between them.
///
/// Targets are taken ``Lanes``' width at a time: one pass over the sources of a block of
/// targets, each source's score added to every target's transition at once. The table holds
/// -infinity where a source is not one of a target's (and in the lanes past the last tempo),
/// which never beats a finite score: each target sees the same sums, in the same order, as one
/// target at a time would.
struct TempoChoices {
    typealias Lanes = SIMD4<Double>
    let tempi: Int
    /// Block `b`'s transitions from source `s` at `b * tempi + s`, one lane per target.
    private let table: [Lanes]
    /// The sources any target of block `b` reads.
    private let blockSources: [ClosedRange<Int>]

    /// From `log P(target | source)`, row-major (`source * tempi + target`).
    init(_ transitions: [Double], tempi: Int) {
        precondition(tempi > 0 && transitions.count == tempi * tempi)
        self.tempi = tempi
        let sources = (0..<tempi).map { target in
            let possible = (0..<tempi).filter { transitions[$0 * tempi + target] > -30 }
            return (possible.first ?? target)...(possible.last ?? target)
        }
        let width = Lanes.scalarCount
        let blocks = (tempi + width - 1) / width
        var table = [Lanes](repeating: Lanes(repeating: -.infinity), count: blocks * tempi)
        var blockSources = [ClosedRange<Int>]()
        for block in 0..<blocks {
            let targets = (block * width)..<min(tempi, (block + 1) * width)
            for target in targets {
                for source in sources[target] {
                    table[block * tempi + source][target - block * width] = transitions[source * tempi + target]
                }
            }
            blockSources.append(targets.map { sources[$0].lowerBound }.min()!...targets.map { sources[$0].upperBound }.max()!)
        }
        self.table = table
        self.blockSources = blockSources
    }

    /// Calls `choice` with each target, its best score and its source, for the beat-end scores
    /// `ends` (one per tempo).
    @inline(__always)
    func best(_ ends: UnsafeBufferPointer<Double>, _ choice: (_ target: Int, _ score: Double, _ source: Int) -> Void) {
        let width = Lanes.scalarCount
        table.withUnsafeBufferPointer { table in
            for (block, sources) in blockSources.enumerated() {
                var best = Lanes(repeating: -.infinity), from = Lanes(repeating: 0)
                for source in sources {
                    let candidate = ends[source] + table[block * tempi + source]
                    let larger = candidate .> best
                    best.replace(with: candidate, where: larger)
                    from.replace(with: Double(source), where: larger)
                }
                for lane in 0..<min(width, tempi - block * width) {
                    choice(block * width + lane, best[lane], Int(from[lane]))
                }
            }
        }
    }
}
