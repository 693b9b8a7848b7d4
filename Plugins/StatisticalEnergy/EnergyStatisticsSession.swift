import Foundation
import TactusDetector

/// The settings of the `default` statistical-energy analysis.
struct EnergyStatisticsSettings {
    var blockSeconds: Double
    var historyBlocks: Int
    var threshold: AdaptiveThreshold
    var windowSeconds: Double
    var hopSeconds: Double
    var bpmRange: ClosedRange<Double>
    var tuning = VoteTuning()
    var bandWeights: [Float] = [1, 1, 1]

    init(_ parameters: ParameterSet) {
        blockSeconds = parameters.number("block_ms") / 1000
        historyBlocks = parameters.integer("history_blocks")
        threshold = AdaptiveThreshold(parameters)
        windowSeconds = parameters.number("window_s")
        hopSeconds = parameters.number("hop_s")
        bpmRange = parameters.number("min_bpm")...parameters.number("max_bpm")
        let env = ProcessInfo.processInfo.environment
        if let v = env["T_PRIOR"].flatMap(Double.init) { tuning.priorCentre = v }
        if let v = env["T_OCT"].flatMap(Double.init) { tuning.priorOctaves = v }
        if let v = env["T_DOUBLE"].flatMap(Double.init) { tuning.doubleWeight = v }
        if let v = env["T_HALF"].flatMap(Double.init) { tuning.halfWeight = v }
        if let v = env["T_BANDS"] { bandWeights = v.split(separator: ",").compactMap { Float(String($0)) } }
    }
}

/// The `default` preset: Patin's statistic made soft and frequency-selective, over the whole
/// song in windows.
///
/// Three sub-bands are split with one-pole filters as the samples stream in: below 150 Hz
/// (kick, bass), 150 Hz-3 kHz (snare body, voices, chords) and above 3 kHz (hi-hats,
/// cymbals). Each block's energy in each band is compared with C times the mean of the
/// band's previous `historyBlocks` blocks, and by how much (in log terms) it exceeds it is
/// the block's beat strength: a continuous beat train instead of Patin's yes/no decision.
final class EnergyStatisticsSession: DetectorSession {
    static let bandCount = 3
    private let settings: EnergyStatisticsSettings
    private let blockLength: Int
    private let frameRate: Double
    private let lowCoefficient: Float
    private let highCoefficient: Float
    private var lowState1: Float = 0
    private var lowState2: Float = 0
    private var highState: Float = 0
    private var sums: (low: Float, mid: Float, high: Float, all: Float) = (0, 0, 0, 0)
    private var pending = 0
    /// Energy per block and band, band-interleaved.
    private var bandEnergies: [Float] = []
    /// Mean squared sample per block.
    private var blockEnergies: [Float] = []

    init(settings: EnergyStatisticsSettings, sampleRate: Double) {
        self.settings = settings
        blockLength = max(1, Int((settings.blockSeconds * sampleRate).rounded()))
        frameRate = sampleRate / Double(blockLength)
        lowCoefficient = Float(1 - exp(-2 * Double.pi * 150 / sampleRate))
        highCoefficient = Float(1 - exp(-2 * Double.pi * 3000 / sampleRate))
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        var low1 = lowState1, low2 = lowState2, high = highState
        var sums = self.sums
        var pending = self.pending
        let lowCoefficient = self.lowCoefficient, highCoefficient = self.highCoefficient
        for sample in samples {
            low1 += lowCoefficient * (sample - low1)
            low2 += lowCoefficient * (low1 - low2)
            high += highCoefficient * (sample - high)
            let mid = high - low2
            let top = sample - high
            sums.low += low2 * low2
            sums.mid += mid * mid
            sums.high += top * top
            sums.all += sample * sample
            pending += 1
            if pending == blockLength {
                bandEnergies.append(sums.low)
                bandEnergies.append(sums.mid)
                bandEnergies.append(sums.high)
                blockEnergies.append(sums.all / Float(blockLength))
                sums = (0, 0, 0, 0)
                pending = 0
            }
        }
        lowState1 = low1
        lowState2 = low2
        highState = high
        self.sums = sums
        self.pending = pending
    }

    func finish() -> DetectorOutput {
        let blockSeconds = 1 / frameRate
        let grid = WindowGrid(
            blockCount: blockEnergies.count, blockSeconds: blockSeconds,
            windowSeconds: settings.windowSeconds, hopSeconds: settings.hopSeconds)
        let train = beatStrengths()
        let vote = ProvisionalTempoVote(bpmRange: settings.bpmRange, tuning: settings.tuning)
        let saliences = grid.windows.map { vote.salience(of: train[$0], frameRate: frameRate) }
        let decision = vote.decide(saliences)
        let windows = zip(grid.windows, decision.windowTempi).map { range, tempo in
            AnalysisWindow(
                startS: Double(range.lowerBound) * blockSeconds, durationS: Double(range.count) * blockSeconds,
                energy: Double(blockEnergies[range].reduce(0, +)) / Double(max(range.count, 1)),
                bpm: tempo.bpm, strength: tempo.strength)
        }
        if blockEnergies.allSatisfy({ $0 == 0 }) {
            return DetectorOutput(bpm: nil, reason: "silence", confidence: 0, candidates: [], windows: windows)
        }
        guard let bpm = decision.bpm else {
            return DetectorOutput(bpm: nil, reason: "no periodicity", confidence: 0, candidates: [], windows: windows)
        }
        return DetectorOutput(
            bpm: bpm, confidence: decision.confidence,
            candidates: decision.candidates.map { TempoCandidate(bpm: $0.bpm, strength: $0.strength) },
            windows: windows)
    }

    /// The soft beat train: per block, the summed log excess of each band's energy over C
    /// times its history mean.
    private func beatStrengths() -> [Float] {
        let bands = Self.bandCount
        let blocks = blockEnergies.count
        var train = [Float](repeating: 0, count: blocks)
        for band in 0..<bands {
            let weight = band < settings.bandWeights.count ? settings.bandWeights[band] : 1
            var songMean = 0.0
            for block in 0..<blocks { songMean += Double(bandEnergies[block * bands + band]) }
            songMean /= Double(max(blocks, 1))
            let floor = max(songMean * 1e-4, Double.leastNormalMagnitude)
            var history = EnergyHistory(capacity: settings.historyBlocks)
            for block in 0..<blocks {
                let energy = Double(bandEnergies[block * bands + band])
                if history.count > 0 {
                    let constant = settings.threshold.constant(mean: history.mean, variance: history.variance)
                    let excess = log((energy + floor) / (constant * history.mean + floor))
                    if excess > 0 { train[block] += weight * Float(excess) }
                }
                history.append(energy)
            }
        }
        return train
    }
}
