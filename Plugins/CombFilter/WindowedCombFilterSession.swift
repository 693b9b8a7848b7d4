import Foundation
import TactusDetector
import TactusDSP
import TactusVote

/// The `windowed` comb filter (preset `default`): resonating combs on six band envelopes of
/// the whole song, windowed, with bars read from the low bands and subdivisions from the high
/// ones (see ``CombFilterDetector``).
final class WindowedCombFilterSession: DetectorSession {
    private let envelope: OnsetStrengthAccumulator
    private let vote: TempoVote
    private let resonator: ResonatorBank
    /// Bands that carry the grouping (bars: kick, bass) and the subdivision (hi-hats) evidence.
    private let groupingBands: [Bool]
    private let subdivisionBands: [Bool]
    private let beatIndices: Range<Int>
    private var finite: FiniteSamples

    init(parameters: ParameterSet, format: SignalFormat, frontEnds: SharedFrontEnds) {
        finite = FiniteSamples(format: format)
        let edges = parameters.numbers("band_edges_hz")
        let frameRate = parameters.number("envelope_hz")
        envelope = OnsetStrengthAccumulator(
            sampleRate: format.sampleRate,
            configuration: OnsetStrengthConfiguration(
                bandEdgesHz: edges, frameRate: frameRate, compression: parameters.number("compression")),
            frontEnds: frontEnds, expectedSamples: format.expectedFrames)
        vote = TempoVote(configuration: TempoVoteConfiguration(parameters))
        resonator = ResonatorBank(
            grid: vote.grid, frameRate: frameRate, halfLifeSeconds: parameters.number("resonator_half_life_s"),
            periods: parameters.integer("resonator_periods"))
        let pairs = Array(zip(edges, edges.dropFirst()))
        groupingBands = pairs.map { $0.1 <= parameters.number("grouping_below_hz") }
        subdivisionBands = pairs.map { $0.0 >= parameters.number("subdivision_above_hz") }
        beatIndices = vote.grid.indices(within: parameters.number("min_bpm")...parameters.number("max_bpm"))
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { envelope.consume($0) }
    }

    func finish() -> DetectorOutput {
        let autocorrelation = EnvelopeAutocorrelation()
        var resonance = [Double](repeating: 0, count: vote.grid.count)
        return vote.decide(envelope.finish()) { window, grid in
            let count = grid.count
            var beat = [Double](repeating: 0, count: count)
            var grouping = beat, subdivision = beat
            var activeBands = 0
            for (band, values) in window.bands.enumerated() {
                let r = autocorrelation.of(values)
                guard r[0] > 0 else { continue }
                resonator.energies(r, into: &resonance)
                activeBands += 1
                Self.add(resonance, to: &beat)
                if groupingBands[band] { Self.add(resonance, to: &grouping) }
                if subdivisionBands[band] { Self.add(resonance, to: &subdivision) }
            }
            guard activeBands > 0 else { return .none(count: count) }
            let strength = (beat[beatIndices].max() ?? 0) / Double(activeBands)
            return PeriodicityEvidence(strength: strength, beat: beat, grouping: grouping, subdivision: subdivision)
        }
    }

    /// `total[index] += values[index]` for every index.
    private static func add(_ values: [Double], to total: inout [Double]) {
        values.withUnsafeBufferPointer { values in
            total.withUnsafeMutableBufferPointer { total in
                for index in total.indices { total[index] += values[index] }
            }
        }
    }
}

/// A bank of resonating combs, one per tempo of a grid, evaluated from an envelope's
/// autocorrelation: the resonator of period T and feedback a = 0.5^(T / half life) has an
/// output energy of R(0) + 2 sum over m >= 1 of a^m R(m T) (up to a constant), so its
/// resonance above the input's own energy is the a^m-weighted mean of R(m T) / R(0) over
/// `periods` periods. The weights depend only on the grid and the envelope rate, so they are
/// computed once per song; which of them a window's autocorrelation reaches depends only on
/// its length, so that is worked out once per length (every window of a song has the same).
/// Not thread-safe: one per session.
final class ResonatorBank {
    /// One term of a resonator's sum: the whole frames of the lag of a multiple of its period,
    /// the shares of the two lags around it in the interpolation (`1 - fraction` and
    /// `fraction`) and the normalised weight a^m of that multiple.
    private struct Tap {
        var whole: Int
        var lowerShare: Double
        var upperShare: Double
        var weight: Double
    }

    /// The terms of one grid tempo that an autocorrelation reaches, and their weights' sum.
    private struct Reach {
        var taps: Range<Int>
        var weightSum: Double
    }

    /// Every grid tempo's terms, tempo after tempo, by increasing lag within each, and their
    /// lags (in frames).
    private let taps: [Tap]
    private let lags: [Double]
    /// `taps[offsets[index]..<offsets[index + 1]]` are grid tempo `index`'s terms.
    private let offsets: [Int]

    /// The lags of the autocorrelations ``reached`` was worked out for.
    private var reachedLength = -1
    private var reached: [Reach] = []
    /// The autocorrelation being read, as doubles.
    private var values: [Double] = []

    init(grid: TempoGrid, frameRate: Double, halfLifeSeconds: Double, periods: Int) {
        var taps: [Tap] = [], lags: [Double] = []
        var offsets = [0]
        for bpm in grid.bpms {
            let lag = 60 * frameRate / bpm
            let feedback = pow(0.5, lag / frameRate / halfLifeSeconds)
            let raw = (1...periods).map { pow(feedback, Double($0)) }
            let total = raw.reduce(0, +)
            for (m, weight) in raw.enumerated() {
                let multiple = lag * Double(m + 1)
                let whole = Int(multiple)
                let fraction = multiple - Double(whole)
                taps.append(Tap(whole: whole, lowerShare: 1 - fraction, upperShare: fraction, weight: weight / total))
                lags.append(multiple)
            }
            offsets.append(taps.count)
        }
        self.taps = taps
        self.lags = lags
        self.offsets = offsets
    }

    /// The resonance of every grid tempo for autocorrelation `r` (lags `0..<r.count`,
    /// `r[0] > 0`), written to `output` (one value per grid tempo); periods beyond the window
    /// are left out and the remaining weights rescaled.
    func energies(_ r: [Float], into output: inout [Double]) {
        precondition(output.count == offsets.count - 1)
        if reachedLength != r.count { reach(length: r.count) }
        if values.count != r.count { values = [Double](repeating: 0, count: r.count) }
        values.withUnsafeMutableBufferPointer { values in
            r.withUnsafeBufferPointer { r in
                for lag in r.indices { values[lag] = Double(r[lag]) }
            }
        }
        let zeroLag = values[0]
        values.withUnsafeBufferPointer { values in
            taps.withUnsafeBufferPointer { taps in
                reached.withUnsafeBufferPointer { reached in
                    output.withUnsafeMutableBufferPointer { output in
                        for index in output.indices {
                            var sum = 0.0
                            for tap in taps[reached[index].taps] {
                                sum += tap.weight * (values[tap.whole] * tap.lowerShare + values[tap.whole + 1] * tap.upperShare)
                            }
                            let weightSum = reached[index].weightSum
                            output[index] = weightSum > 0 ? sum / (weightSum * zeroLag) : 0
                        }
                    }
                }
            }
        }
    }

    /// The terms an autocorrelation of `length` lags reaches: those whose lag is below its last
    /// lag (a prefix of each tempo's terms), with their weights summed in the order they are read.
    private func reach(length: Int) {
        let last = Double(length - 1)
        reached = (0..<(offsets.count - 1)).map { index in
            var end = offsets[index], weightSum = 0.0
            while end < offsets[index + 1], lags[end] < last {
                weightSum += taps[end].weight
                end += 1
            }
            return Reach(taps: offsets[index]..<end, weightSum: weightSum)
        }
        reachedLength = length
    }
}
