import Foundation
import TactusDSP
import TactusDetector
import TactusVote

/// The settings of the `default` statistical-energy analysis.
struct EnergyStatisticsSettings {
    var blockSeconds: Double
    var historyBlocks: Int
    var threshold: AdaptiveThreshold
    var intervals: BeatIntervalHistogram.Settings
    var vote: TempoVoteConfiguration
    /// Crossover frequencies between the low, middle and high bands, in Hz.
    var bandSplitHz: (low: Double, high: Double)

    init(_ parameters: ParameterSet) {
        blockSeconds = parameters.number("block_ms") / 1000
        historyBlocks = parameters.integer("history_blocks")
        threshold = AdaptiveThreshold(parameters)
        intervals = BeatIntervalHistogram.Settings(
            peakSeconds: parameters.number("peak_ms") / 1000, smoothing: parameters.number("interval_smoothing"))
        let split = parameters.numbers("band_split_hz")
        bandSplitHz = (split[0], split[1])
        vote = TempoVoteConfiguration(parameters)
    }
}

/// The `default` preset: Patin's statistic made soft and frequency-selective, over the whole
/// song in windows.
///
/// Three sub-bands are split with one-pole filters as the samples stream in: by default
/// below 150 Hz (kick, bass; two poles), 150 Hz-3 kHz (snare body, voices, chords) and above
/// 3 kHz (hi-hats, cymbals). Each block's energy in each band is compared with C times the mean of the
/// band's previous `historyBlocks` blocks, and by how much (in log terms) it exceeds it is
/// the block's beat strength: a continuous beat train instead of Patin's yes/no decision.
/// The local maxima of each train are its beats; the intervals between them, weighted by the
/// beats' strengths, make a histogram per window (``BeatIntervalHistogram``), and the shared
/// windowed ``TempoVote`` decides the metrical level with subdivisions read from the high band.
final class EnergyStatisticsSession: DetectorSession {
    private var finite = FiniteSamples()
    static let bandCount = 3
    private let settings: EnergyStatisticsSettings
    private let sampleRate: Double
    private let blockLength: Int
    private let lowCoefficient: Float
    private let highCoefficient: Float
    private var lowState1: Float = 0
    private var lowState2: Float = 0
    private var highState: Float = 0
    private var sums: (low: Float, mid: Float, high: Float, all: Float) = (0, 0, 0, 0)
    private var pending = 0
    private var sampleCount = 0
    /// Energy per block and band, band-interleaved.
    private var bandEnergies: [Float] = []
    /// Sum of squared samples before each block, then over every sample (for window energies).
    private var energyPrefix: [Double] = [0]

    init(settings: EnergyStatisticsSettings, sampleRate: Double) {
        self.settings = settings
        self.sampleRate = sampleRate
        blockLength = max(1, Int((settings.blockSeconds * sampleRate).rounded()))
        lowCoefficient = Float(1 - exp(-2 * Double.pi * settings.bandSplitHz.low / sampleRate))
        highCoefficient = Float(1 - exp(-2 * Double.pi * settings.bandSplitHz.high / sampleRate))
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { accumulate($0) }
    }

    private func accumulate(_ samples: UnsafeBufferPointer<Float>) {
        var low1 = lowState1, low2 = lowState2, high = highState
        var sums = self.sums
        var pending = self.pending
        let lowCoefficient = self.lowCoefficient, highCoefficient = self.highCoefficient
        let lowKeep = 1 - lowCoefficient, highKeep = 1 - highCoefficient
        var index = 0
        while index < samples.count {
            // Up to the end of the block: the loop the samples spend their time in has no branch.
            let stop = min(samples.count, index + blockLength - pending)
            for sample in samples[index..<stop] {
                // y = (1 - a) y + a x: each state goes from sample to sample through one
                // multiplication and one addition (the filters' recurrences, not the
                // arithmetic, bound this loop's speed).
                low1 = lowKeep * low1 + lowCoefficient * sample
                low2 = lowKeep * low2 + lowCoefficient * low1
                high = highKeep * high + highCoefficient * sample
                let mid = high - low2
                let top = sample - high
                sums.low += low2 * low2
                sums.mid += mid * mid
                sums.high += top * top
                sums.all += sample * sample
            }
            pending += stop - index
            index = stop
            if pending == blockLength {
                bandEnergies.append(sums.low)
                bandEnergies.append(sums.mid)
                bandEnergies.append(sums.high)
                energyPrefix.append(energyPrefix[energyPrefix.count - 1] + Double(sums.all))
                sums = (0, 0, 0, 0)
                pending = 0
            }
        }
        lowState1 = low1
        lowState2 = low2
        highState = high
        self.sums = sums
        self.pending = pending
        sampleCount += samples.count
    }

    func finish() -> DetectorOutput {
        var prefix = energyPrefix
        prefix.append(prefix[prefix.count - 1] + Double(sums.all))
        let envelope = OnsetStrengthEnvelope(
            frameRate: sampleRate / Double(blockLength), sampleRate: sampleRate, bands: beatStrengths(),
            sampleCount: sampleCount, energyPrefix: prefix)
        let vote = TempoVote(configuration: settings.vote)
        let histogram = BeatIntervalHistogram(
            beats: envelope.bands.map { BeatIntervalHistogram.beats(in: $0, rate: envelope.frameRate, settings: settings.intervals) },
            rate: envelope.frameRate, grid: vote.grid, settings: settings.intervals)
        let beatIndices = vote.grid.indices(within: settings.vote.minBPM...settings.vote.maxBPM)
        let highBand = Self.bandCount - 1
        let autocorrelation = EnvelopeAutocorrelation()
        return vote.decide(envelope) { window, _ in
            let bands = (0..<Self.bandCount).map { histogram.window(band: $0, frames: window.startFrame..<(window.startFrame + window.frameCount)) }
            var beat = [Double](repeating: 0, count: vote.grid.count)
            var activeBands = 0
            for band in bands where band.pairWeight > 0 {
                activeBands += 1
                for index in beat.indices { beat[index] += band.density[index] }
            }
            guard activeBands > 0, let best = beatIndices.max(by: { beat[$0] < beat[$1] }) else {
                return .none(count: vote.grid.count)
            }
            // How periodic the trains are at the histogram's best beat, above the level random
            // beats of the same density would reach: the contrast of the most periodic band (a
            // string quartet's beat lives in one band only).
            let bestLag = window.lag(ofBPM: vote.grid.bpms[best])
            let lags = window.lag(ofBPM: vote.grid.bpms[beatIndices.upperBound - 1])...window.lag(ofBPM: vote.grid.bpms[beatIndices.lowerBound])
            let contrasts = window.bands.map { train in
                PeriodicityContrast(autocorrelation: autocorrelation.of(train), frames: window.frameCount, lags: lags)
                    .strength(atLag: bestLag)
            }
            let strength = contrasts.max() ?? 0
            return PeriodicityEvidence(strength: strength, beat: beat, grouping: beat, subdivision: bands[highBand].density)
        }
    }

    /// The soft beat trains, one per band: per block, the log excess of the band's energy over
    /// C times its history mean (0 when it does not exceed it). Energies below 10^-4 of the
    /// band's mean over the song are treated as that floor, so near-silence adds no noise.
    private func beatStrengths() -> [[Float]] {
        let bands = Self.bandCount
        let blocks = bandEnergies.count / bands
        var trains: [[Float]] = []
        for band in 0..<bands {
            var train = [Float](repeating: 0, count: blocks)
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
                    if excess > 0 { train[block] = Float(excess) }
                }
                history.append(energy)
            }
            trains.append(train)
        }
        return trains
    }
}
