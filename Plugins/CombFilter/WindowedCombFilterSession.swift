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
        return vote.decide(envelope.finish()) { window, grid in
            let count = grid.count
            var beat = [Double](repeating: 0, count: count)
            var grouping = beat, subdivision = beat
            var activeBands = 0
            for (band, r) in autocorrelation.perBand(window).enumerated() where r[0] > 0 {
                let resonance = resonator.energies(r)
                activeBands += 1
                for index in 0..<count {
                    beat[index] += resonance[index]
                    if groupingBands[band] { grouping[index] += resonance[index] }
                    if subdivisionBands[band] { subdivision[index] += resonance[index] }
                }
            }
            guard activeBands > 0 else { return .none(count: count) }
            let strength = (beat[beatIndices].max() ?? 0) / Double(activeBands)
            return PeriodicityEvidence(strength: strength, beat: beat, grouping: grouping, subdivision: subdivision)
        }
    }
}

/// A bank of resonating combs, one per tempo of a grid, evaluated from an envelope's
/// autocorrelation: the resonator of period T and feedback a = 0.5^(T / half life) has an
/// output energy of R(0) + 2 sum over m >= 1 of a^m R(m T) (up to a constant), so its
/// resonance above the input's own energy is the a^m-weighted mean of R(m T) / R(0) over
/// `periods` periods. The weights depend only on the grid and the envelope rate, so they are
/// computed once per song.
struct ResonatorBank {
    /// One term of a resonator's sum: the lag (in frames) of a multiple of its period and the
    /// normalised weight a^m of that multiple.
    private struct Tap {
        var lag: Double
        var weight: Double
        /// The lag's whole frames, and the shares of the two lags around it in the
        /// interpolation (`1 - fraction` and `fraction`), computed once.
        var whole: Int
        var lowerShare: Double
        var upperShare: Double

        init(lag: Double, weight: Double) {
            self.lag = lag
            self.weight = weight
            whole = Int(lag)
            upperShare = lag - Double(whole)
            lowerShare = 1 - upperShare
        }
    }

    /// `taps[offsets[index]..<offsets[index + 1]]` are grid tempo `index`'s terms, by increasing lag.
    private let taps: [Tap]
    private let offsets: [Int]

    init(grid: TempoGrid, frameRate: Double, halfLifeSeconds: Double, periods: Int) {
        var taps: [Tap] = []
        var offsets = [0]
        for bpm in grid.bpms {
            let lag = 60 * frameRate / bpm
            let feedback = pow(0.5, lag / frameRate / halfLifeSeconds)
            let raw = (1...periods).map { pow(feedback, Double($0)) }
            let total = raw.reduce(0, +)
            for (m, weight) in raw.enumerated() { taps.append(Tap(lag: lag * Double(m + 1), weight: weight / total)) }
            offsets.append(taps.count)
        }
        self.taps = taps
        self.offsets = offsets
    }

    /// The resonance of every grid tempo for autocorrelation `r` (lags `0..<r.count`,
    /// `r[0] > 0`); periods beyond the window are left out and the remaining weights rescaled.
    func energies(_ r: [Float]) -> [Double] {
        let zeroLag = Double(r[0])
        let last = Double(r.count - 1)
        return r.withUnsafeBufferPointer { values in
            taps.withUnsafeBufferPointer { taps in
                (0..<(offsets.count - 1)).map { index in
                    var sum = 0.0, weightSum = 0.0
                    for tap in taps[offsets[index]..<offsets[index + 1]] {
                        guard tap.lag < last else { break }
                        sum += tap.weight * (Double(values[tap.whole]) * tap.lowerShare + Double(values[tap.whole + 1]) * tap.upperShare)
                        weightSum += tap.weight
                    }
                    return weightSum > 0 ? sum / (weightSum * zeroLag) : 0
                }
            }
        }
    }
}
