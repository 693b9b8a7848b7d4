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
    private var finite: FiniteSamples
    static let bandCount = 3
    private let settings: EnergyStatisticsSettings
    private let sampleRate: Double
    private let blockLength: Int
    private let lowCoefficient: Float
    private let highCoefficient: Float
    /// The filters' state and the blocks' energies so far (``BlockRecord``).
    private var record = BlockRecord()
    /// The samples of a block begun in an earlier call (``pending`` of them).
    private let partialBlock: UnsafeMutablePointer<Float>
    private var pending = 0
    /// The last block filtered: its low band and its high-passed signal.
    private let lowBand: UnsafeMutablePointer<Float>
    private let highPassed: UnsafeMutablePointer<Float>
    private var sampleCount = 0

    /// What the blocks leave: the one-pole filters' state, each block's energy per band and
    /// the running energy. A call takes it out of the session for its blocks (one access to
    /// the session's property per call, not several per block).
    private struct BlockRecord {
        var lowState1: Float = 0
        var lowState2: Float = 0
        var highState: Float = 0
        /// Energy per block and band, band-interleaved.
        var bandEnergies: [Float] = []
        /// Sum of squared samples before each block, then over every sample (for window energies).
        var energyPrefix: [Double] = [0]
    }

    /// A session for a song of `format`, holding room for its blocks when their number is known.
    init(settings: EnergyStatisticsSettings, format: SignalFormat) {
        let sampleRate = format.sampleRate
        finite = FiniteSamples(format: format)
        self.settings = settings
        self.sampleRate = sampleRate
        blockLength = max(1, Int((settings.blockSeconds * sampleRate).rounded()))
        if let expected = format.expectedFrames, expected > 0 {
            // At most 2^19 blocks (50 minutes of 5.8 ms blocks) held in advance, whatever a
            // header claims: a longer song grows as it comes.
            let blocks = min(expected / blockLength + 1, 1 << 19)
            record.bandEnergies.reserveCapacity(blocks * Self.bandCount)
            record.energyPrefix.reserveCapacity(blocks + 1)
        }
        lowCoefficient = Float(1 - exp(-2 * Double.pi * settings.bandSplitHz.low / sampleRate))
        highCoefficient = Float(1 - exp(-2 * Double.pi * settings.bandSplitHz.high / sampleRate))
        partialBlock = .allocate(capacity: blockLength)
        lowBand = .allocate(capacity: blockLength)
        highPassed = .allocate(capacity: blockLength)
    }

    deinit {
        partialBlock.deallocate()
        lowBand.deallocate()
        highPassed.deallocate()
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { accumulate($0) }
    }

    /// Takes the samples block by block: each block is filtered and summed whole, from its
    /// start, so the result does not depend on how the song was cut into calls. A block that
    /// spans two calls is gathered in ``partialBlock``; the others are read where they are.
    private func accumulate(_ samples: UnsafeBufferPointer<Float>) {
        guard let base = samples.baseAddress else { return }
        sampleCount += samples.count
        // Empty arrays allocate nothing: the placeholder left in the session costs nothing.
        var record = BlockRecord(bandEnergies: [], energyPrefix: [])
        swap(&record, &self.record)
        defer { swap(&record, &self.record) }
        var index = 0
        if pending > 0 {
            let take = min(blockLength - pending, samples.count)
            (partialBlock + pending).update(from: base, count: take)
            pending += take
            index = take
            guard pending == blockLength else { return }
            addBlock(UnsafeBufferPointer(start: partialBlock, count: blockLength), to: &record)
            pending = 0
        }
        while index + blockLength <= samples.count {
            addBlock(UnsafeBufferPointer(start: base + index, count: blockLength), to: &record)
            index += blockLength
        }
        pending = samples.count - index
        partialBlock.update(from: base + index, count: pending)
    }

    /// Filters one whole block and records its band energies and its energy.
    private func addBlock(_ block: UnsafeBufferPointer<Float>, to record: inout BlockRecord) {
        filter(block, state: &record)
        let sums = energies(of: block)
        record.bandEnergies.append(sums.low)
        record.bandEnergies.append(sums.mid)
        record.bandEnergies.append(sums.high)
        record.energyPrefix.append(record.energyPrefix[record.energyPrefix.count - 1] + Double(sums.all))
    }

    /// Runs the one-pole filters over the block `samples`, leaving its low band (two poles) in
    /// ``lowBand`` and its high-passed signal in ``highPassed``.
    ///
    /// A one-pole filter, `y[n] = k y[n-1] + a x[n]` (`k = 1 - a`), taken sample by sample is
    /// a chain of dependent steps that bounds the loop's speed. So two samples are taken at a
    /// time, the second from the state before both: `y[n+1] = k² y[n-1] + (k a x[n] + a x[n+1])`,
    /// which halves the chain.
    private func filter(_ samples: UnsafeBufferPointer<Float>, state: inout BlockRecord) {
        var low1 = state.lowState1, low2 = state.lowState2, high = state.highState
        let lowA = lowCoefficient, highA = highCoefficient
        let lowK = 1 - lowA, highK = 1 - highA
        let lowK2 = lowK * lowK, highK2 = highK * highK, lowKA = lowK * lowA
        let lowBand = self.lowBand, highPassed = self.highPassed
        var index = 0
        while index + 2 <= samples.count {
            let lowIn0 = lowA * samples[index], lowIn1 = lowA * samples[index + 1]
            let highIn0 = highA * samples[index], highIn1 = highA * samples[index + 1]
            let first0 = lowK * low1 + lowIn0
            let first1 = lowK2 * low1 + (lowK * lowIn0 + lowIn1)
            let second0 = lowK * low2 + lowA * first0
            let second1 = lowK2 * low2 + (lowKA * first0 + lowA * first1)
            let high0 = highK * high + highIn0
            let high1 = highK2 * high + (highK * highIn0 + highIn1)
            low1 = first1
            low2 = second1
            high = high1
            lowBand[index] = second0
            lowBand[index + 1] = second1
            highPassed[index] = high0
            highPassed[index + 1] = high1
            index += 2
        }
        if index < samples.count {
            low1 = lowK * low1 + lowA * samples[index]
            low2 = lowK * low2 + lowA * low1
            high = highK * high + highA * samples[index]
            lowBand[index] = low2
            highPassed[index] = high
        }
        state.lowState1 = low1
        state.lowState2 = low2
        state.highState = high
    }

    /// The energies over `samples` of the low band, the middle band (the high-passed signal
    /// less the low band), the high band (the signal less the high-passed) and the whole
    /// signal, from what ``filter(_:)`` left in the scratch buffers: eight samples at a time,
    /// in eight lanes per sum.
    private func energies(of samples: UnsafeBufferPointer<Float>) -> (low: Float, mid: Float, high: Float, all: Float) {
        guard let input = samples.baseAddress else { return (0, 0, 0, 0) }
        let lowBand = self.lowBand, highPassed = self.highPassed
        var low = SIMD8<Float>(repeating: 0), mid = low, top = low, all = low
        var index = 0
        while index + 8 <= samples.count {
            let x = UnsafeRawPointer(input + index).loadUnaligned(as: SIMD8<Float>.self)
            let lowValues = UnsafeRawPointer(lowBand + index).loadUnaligned(as: SIMD8<Float>.self)
            let highValues = UnsafeRawPointer(highPassed + index).loadUnaligned(as: SIMD8<Float>.self)
            let midValues = highValues - lowValues
            let topValues = x - highValues
            low += lowValues * lowValues
            mid += midValues * midValues
            top += topValues * topValues
            all += x * x
            index += 8
        }
        var sums = (low: low.sum(), mid: mid.sum(), high: top.sum(), all: all.sum())
        while index < samples.count {
            let x = input[index], lowValue = lowBand[index], highValue = highPassed[index]
            sums.low += lowValue * lowValue
            sums.mid += (highValue - lowValue) * (highValue - lowValue)
            sums.high += (x - highValue) * (x - highValue)
            sums.all += x * x
            index += 1
        }
        return sums
    }

    func finish() -> DetectorOutput {
        var prefix = record.energyPrefix
        // The samples of the last, incomplete block count in the song's energy.
        let lastSamples = UnsafeBufferPointer(start: partialBlock, count: pending)
        prefix.append(prefix[prefix.count - 1] + Double(SquaredSum.of(lastSamples, lastSamples.indices)))
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
                PeriodicityContrast(of: train, lags: lags, autocorrelation: autocorrelation)
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
        let blocks = record.bandEnergies.count / bands
        var trains: [[Float]] = []
        for band in 0..<bands {
            var train = [Float](repeating: 0, count: blocks)
            var songMean = 0.0
            for block in 0..<blocks { songMean += Double(record.bandEnergies[block * bands + band]) }
            songMean /= Double(max(blocks, 1))
            let floor = max(songMean * 1e-4, Double.leastNormalMagnitude)
            var history = EnergyHistory(capacity: settings.historyBlocks)
            for block in 0..<blocks {
                let energy = Double(record.bandEnergies[block * bands + band])
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
