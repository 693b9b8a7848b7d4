import TactusDSP
import TactusDetector
import TactusVote

/// The settings of Patin's streaming detector, read from a resolved parameter set.
struct PatinSettings {
    var blockSeconds: Double
    var historyBlocks: Int
    var threshold: AdaptiveThreshold
    var holdBlocks: Int
    var refractorySeconds: Double
    var windowSeconds: Double
    var hopSeconds: Double
    var bpmRange: ClosedRange<Double>

    init(_ parameters: ParameterSet) {
        blockSeconds = parameters.number("block_ms") / 1000
        historyBlocks = parameters.integer("history_blocks")
        threshold = AdaptiveThreshold(parameters)
        holdBlocks = parameters.integer("hold_blocks")
        refractorySeconds = parameters.number("refractory_s")
        windowSeconds = parameters.number("window_s")
        hopSeconds = parameters.number("hop_s")
        bpmRange = parameters.number("min_bpm")...parameters.number("max_bpm")
    }
}

/// Patin's variance-adaptive constant C = slope * V + intercept, with V the variance of the
/// history's energies relative to their squared mean (times `varianceScale`), so that the
/// same music gives the same C at any level. Patin fitted the line on his own amplitude
/// scale: `varianceScale` maps our level-free variance onto it.
struct AdaptiveThreshold {
    var slope: Double
    var intercept: Double
    var varianceScale: Double
    var minimum: Double

    init(_ parameters: ParameterSet) {
        slope = parameters.number("c_slope")
        intercept = parameters.number("c_intercept")
        varianceScale = parameters.number("variance_scale")
        minimum = parameters.number("c_min")
    }

    /// C for a history with this mean and variance of energies.
    func constant(mean: Double, variance: Double) -> Double {
        let relativeVariance = mean > 0 ? variance / (mean * mean) : 0
        return max(minimum, slope * relativeVariance * varianceScale + intercept)
    }
}

/// A ring of the last `capacity` block energies with running sums (seed 004's moving window
/// computed with a running sum), giving their mean and variance in constant time.
struct EnergyHistory {
    private var values: [Double]
    private var next = 0
    private(set) var count = 0
    private var sum = 0.0
    private var sumOfSquares = 0.0

    init(capacity: Int) {
        values = [Double](repeating: 0, count: capacity)
    }

    var isFull: Bool { count == values.count }
    var mean: Double { count > 0 ? sum / Double(count) : 0 }
    var variance: Double {
        guard count > 0 else { return 0 }
        let mean = self.mean
        return max(0, sumOfSquares / Double(count) - mean * mean)
    }

    mutating func append(_ energy: Double) {
        if isFull {
            let old = values[next]
            sum -= old
            sumOfSquares -= old * old
        } else {
            count += 1
        }
        values[next] = energy
        sum += energy
        sumOfSquares += energy * energy
        next = (next + 1) % values.count
    }
}

/// Patin's detector as published (the `classic` preset): the instant energy of each block
/// against C times the mean of the blocks before it, then a tempo from the beat intervals.
///
/// A beat is declared on the first block of a run of `holdBlocks` blocks above the threshold
/// (the debounce of seed 004), and no sooner than `refractorySeconds` after the previous one.
final class PatinBeatSession: DetectorSession {
    private var finite = FiniteSamples()
    private let settings: PatinSettings
    private let sampleRate: Double
    private let blockLength: Int
    private var history: EnergyHistory
    private var pendingEnergy = 0.0
    private var pendingCount = 0
    private var blockIndex = 0
    private var runLength = 0
    private var lastBeat = -Double.infinity
    private var beatTimes: [Double] = []
    /// Mean squared sample of every block: the per-window energies come from these.
    private var blockEnergies: [Float] = []

    init(settings: PatinSettings, sampleRate: Double) {
        self.settings = settings
        self.sampleRate = sampleRate
        blockLength = max(1, Int((settings.blockSeconds * sampleRate).rounded()))
        history = EnergyHistory(capacity: settings.historyBlocks)
    }

    private var blockSeconds: Double { Double(blockLength) / sampleRate }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { accumulate($0) }
    }

    private func accumulate(_ samples: UnsafeBufferPointer<Float>) {
        var energy = pendingEnergy
        var count = pendingCount
        for sample in samples {
            energy += Double(sample * sample)
            count += 1
            if count == blockLength {
                endBlock(energy: energy)
                energy = 0
                count = 0
            }
        }
        pendingEnergy = energy
        pendingCount = count
    }

    private func endBlock(energy: Double) {
        // Patin's instant energy on a 1024-sample scale: the same number at every sample rate.
        let instant = energy * 1024 / Double(blockLength)
        blockEnergies.append(Float(energy / Double(blockLength)))
        if history.isFull {
            let constant = settings.threshold.constant(mean: history.mean, variance: history.variance)
            if instant > 0, instant > constant * history.mean {
                runLength += 1
                let runStart = Double(blockIndex - runLength + 1) * blockSeconds
                if runLength == settings.holdBlocks, runStart - lastBeat >= settings.refractorySeconds {
                    beatTimes.append(runStart)
                    lastBeat = runStart
                }
            } else {
                runLength = 0
            }
        }
        history.append(instant)
        blockIndex += 1
    }

    func finish() -> DetectorOutput {
        let layout = TempoVote(configuration: TempoVoteConfiguration(
            windowSeconds: settings.windowSeconds, hopSeconds: settings.hopSeconds,
            minBPM: settings.bpmRange.lowerBound, maxBPM: settings.bpmRange.upperBound))
        let windows = layout.windowRanges(frameCount: blockEnergies.count, frameRate: 1 / blockSeconds).map { range -> AnalysisWindow in
            let start = Double(range.lowerBound) * blockSeconds
            let end = Double(range.upperBound) * blockSeconds
            let beats = beatTimes.filter { $0 >= start && $0 < end }
            let tempo = BeatIntervalTempo(beatTimes: beats, bpmRange: settings.bpmRange, tolerance: 1.5 * blockSeconds).best
            return AnalysisWindow(
                startS: start, durationS: end - start, energy: meanEnergy(range),
                bpm: tempo?.bpm, strength: tempo?.share ?? 0)
        }
        if blockEnergies.isEmpty {
            return DetectorOutput(bpm: nil, reason: "too short", confidence: 0, candidates: [], windows: windows)
        }
        if blockEnergies.allSatisfy({ $0 == 0 }) {
            return DetectorOutput(bpm: nil, reason: "silence", confidence: 0, candidates: [], windows: windows)
        }
        let clusters = BeatIntervalTempo(beatTimes: beatTimes, bpmRange: settings.bpmRange, tolerance: 1.5 * blockSeconds)
        guard let best = clusters.best else {
            return DetectorOutput(bpm: nil, reason: "no periodic beats", confidence: 0, candidates: [], windows: windows)
        }
        return DetectorOutput(
            bpm: best.bpm, confidence: best.share,
            candidates: clusters.candidates.map { TempoCandidate(bpm: $0.bpm, strength: $0.score / best.score) },
            windows: windows)
    }

    private func meanEnergy(_ blocks: Range<Int>) -> Double {
        guard !blocks.isEmpty else { return 0 }
        return blocks.reduce(0.0) { $0 + Double(blockEnergies[$1]) } / Double(blocks.count)
    }
}
