import Foundation
import TactusDSP

/// Overlapping analysis windows over a sequence of blocks.
struct WindowGrid {
    let windows: [Range<Int>]

    init(blockCount: Int, blockSeconds: Double, windowSeconds: Double, hopSeconds: Double) {
        let length = max(1, Int((windowSeconds / blockSeconds).rounded()))
        let hop = max(1, Int((hopSeconds / blockSeconds).rounded()))
        guard blockCount > length else {
            windows = blockCount > 0 ? [0..<blockCount] : []
            return
        }
        var windows: [Range<Int>] = []
        var start = 0
        while start + length <= blockCount {
            windows.append(start..<(start + length))
            start += hop
        }
        if let last = windows.last, last.upperBound < blockCount {
            windows.append((blockCount - length)..<blockCount)
        }
        self.windows = windows
    }
}

/// Tuning knobs of the provisional vote.
struct VoteTuning {
    var priorCentre = 120.0
    var priorOctaves = 1.0
    var doubleWeight = 0.5
    var halfWeight = 0.0
}

/// Per-window salience over tempo and the song's vote.
struct ProvisionalTempoVote {
    let grid: [Double]
    let bpmRange: ClosedRange<Double>
    let tuning: VoteTuning

    init(bpmRange: ClosedRange<Double>, tuning: VoteTuning = VoteTuning()) {
        self.bpmRange = bpmRange
        self.tuning = tuning
        let step = 1.002
        var grid: [Double] = []
        var bpm = bpmRange.lowerBound
        while bpm <= bpmRange.upperBound {
            grid.append(bpm)
            bpm *= step
        }
        self.grid = grid
    }

    /// Salience of each grid tempo in one window of an envelope at `frameRate`.
    func salience(of segment: ArraySlice<Float>, frameRate: Double) -> [Double] {
        let count = segment.count
        let mean = segment.reduce(0, +) / Float(max(count, 1))
        let centred = segment.map { $0 - mean }
        let maxLag = min(count - 1, Int(ceil(2 * 60 * frameRate / bpmRange.lowerBound)) + 2)
        guard maxLag > 2 else { return [Double](repeating: 0, count: grid.count) }
        let r = FFTAutocorrelation(length: count, maxLag: maxLag).compute(centred)
        guard r[0] > 0 else { return [Double](repeating: 0, count: grid.count) }
        func at(_ lag: Double) -> Double {
            let index = Int(lag)
            guard index + 1 <= maxLag else { return 0 }
            let fraction = lag - Double(index)
            return (Double(r[index]) * (1 - fraction) + Double(r[index + 1]) * fraction) / Double(r[0])
        }
        return grid.map { bpm in
            let lag = 60 * frameRate / bpm
            return at(lag) + tuning.doubleWeight * at(2 * lag) + tuning.halfWeight * at(lag / 2)
        }
    }

    func prior(_ bpm: Double) -> Double {
        let octaves = log2(bpm / tuning.priorCentre) / tuning.priorOctaves
        return exp(-0.5 * octaves * octaves)
    }

    struct Decision {
        var bpm: Double?
        var confidence: Double
        var candidates: [(bpm: Double, strength: Double)]
        var windowTempi: [(bpm: Double?, strength: Double)]
    }

    func decide(_ saliences: [[Double]]) -> Decision {
        var total = [Double](repeating: 0, count: grid.count)
        var windowTempi: [(bpm: Double?, strength: Double)] = []
        for salience in saliences {
            var bestIndex = 0
            var bestValue = -Double.infinity
            for index in grid.indices {
                let value = salience[index] * prior(grid[index])
                if value > bestValue {
                    bestValue = value
                    bestIndex = index
                }
            }
            let strength = min(1, max(0, salience[bestIndex]))
            windowTempi.append((strength > 0 ? grid[bestIndex] : nil, strength))
            for index in grid.indices { total[index] += max(0, salience[index]) * strength }
        }
        let weighted = grid.indices.map { total[$0] * prior(grid[$0]) }
        var peaks: [(bpm: Double, value: Double)] = []
        for index in 1..<(grid.count - 1) where weighted[index] > weighted[index - 1] && weighted[index] >= weighted[index + 1] {
            let vertex = Peaks.parabolicVertex(left: weighted[index - 1], centre: weighted[index], right: weighted[index + 1])
            peaks.append((grid[index] * pow(1.002, vertex.offset), vertex.value))
        }
        peaks.sort { $0.value > $1.value }
        guard let best = peaks.first, best.value > 0 else {
            return Decision(bpm: nil, confidence: 0, candidates: [], windowTempi: windowTempi)
        }
        let strengthSum = windowTempi.reduce(0) { $0 + $1.strength }
        let confidence = saliences.isEmpty ? 0 : strengthSum / Double(saliences.count)
        return Decision(
            bpm: best.bpm, confidence: min(1, confidence),
            candidates: peaks.prefix(5).map { ($0.bpm, $0.value / best.value) }, windowTempi: windowTempi)
    }
}
