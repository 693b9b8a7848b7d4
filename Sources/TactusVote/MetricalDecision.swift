import Foundation
import TactusDSP

/// Which metrical level is the beat: a rule over the whole song's periodicity evidence, in
/// place of a fixed tempo prior alone.
///
/// Music repeats at every level of its metre: a song at 128 BPM also repeats at 64 (half
/// bars), 32 (bars) and 256 (eighths), and a syncopated pattern repeats at 2/3 or 4/3 of the
/// beat. A periodicity curve alone therefore favours slow levels (whose period contains the
/// faster ones) or dotted rhythms. The beat is the level that is itself strongly periodic,
/// grouped by a periodicity above it and divided by one below it:
///
///     score(T) = [ beat(T) + groupingWeight * max(grouping(T/2), grouping(T/3))
///                          + subdivisionWeight * max(subdivision(2T), subdivision(3T)) ] * prior(T)
///
/// (negative values count as 0). A dotted level (2/3 of the beat) has no regular subdivision
/// at twice its tempo and no grouping at its half, so the 3:2 confusions lose; of two
/// octave-related levels, the one whose subdivisions are also periodic wins, and a slow
/// level whose own beat is weak (a bar with one kick) loses to its half. Duple and triple
/// groupings and subdivisions count alike, so waltzes keep their quarter note. The prior,
/// a log-normal over tempo (centre `priorBPM`, width `priorOctaves`, 0: none), is wide: it
/// only breaks near-ties that the evidence leaves. Only the song's own periodicities (peaks of
/// `beat`) are candidates: a level the music does not repeat at cannot be its beat.
public struct MetricalDecision: Sendable, Hashable {
    public var groupingWeight: Double
    public var subdivisionWeight: Double
    public var priorBPM: Double
    public var priorOctaves: Double

    public init(groupingWeight: Double, subdivisionWeight: Double, priorBPM: Double, priorOctaves: Double) {
        precondition(groupingWeight >= 0 && subdivisionWeight >= 0 && priorBPM > 0 && priorOctaves >= 0)
        self.groupingWeight = groupingWeight
        self.subdivisionWeight = subdivisionWeight
        self.priorBPM = priorBPM
        self.priorOctaves = priorOctaves
    }

    /// The groupings and subdivisions read for a candidate beat.
    static let ratios = [2.0, 3.0]

    /// The prior weight of `bpm`, 1 at `priorBPM`.
    public func prior(_ bpm: Double) -> Double {
        guard priorOctaves > 0 else { return 1 }
        let distance = log2(bpm / priorBPM) / priorOctaves
        return exp(-0.5 * distance * distance)
    }

    /// The score of the tempo `bpm` given `evidence` sampled on `grid`.
    public func score(_ evidence: PeriodicityEvidence, grid: TempoGrid, bpm: Double) -> Double {
        let beat = max(grid.value(evidence.beat, atBPM: bpm), 0)
        let grouping = Self.ratios.map { grid.value(evidence.grouping, atBPM: bpm / $0) }.max() ?? 0
        let subdivision = Self.ratios.map { grid.value(evidence.subdivision, atBPM: bpm * $0) }.max() ?? 0
        return (beat + groupingWeight * max(grouping, 0) + subdivisionWeight * max(subdivision, 0)) * prior(bpm)
    }

    /// The song's own periodicities in `range` that the decision chooses among: the local maxima
    /// of the whole `beat` curve with a positive value (a range boundary counts only where the
    /// curve really peaks there, or one grid step beyond it), refined by parabolic
    /// interpolation, each with its score, best first. A tempo that is not itself a periodicity
    /// of the music is never the beat, however well its half or double is supported.
    public func choices(_ evidence: PeriodicityEvidence, grid: TempoGrid, range: Range<Int>) -> [(bpm: Double, score: Double)] {
        let beat = evidence.beat
        var found: [(bpm: Double, score: Double)] = []
        // Peaks of the whole curve, not of the range's slice: where the curve still rises at
        // a range boundary, its peak lies outside and the boundary is no periodicity. A peak
        // one grid step beyond the boundary counts: it is the song's tempo read at the edge
        // (200 BPM exactly, say), and its refined tempo lies within a step (0.35 %) of it.
        let lower = max(range.lowerBound - 1, 1), upper = min(range.upperBound + 1, beat.count - 1)
        for index in lower..<max(upper, lower) where beat[index] > 0 {
            let left = beat[index - 1], right = beat[index + 1]
            guard beat[index] >= left && beat[index] >= right && (beat[index] > left || beat[index] > right) else { continue }
            let position = Double(index) + Peaks.parabolicVertex(left: left, centre: beat[index], right: right).offset
            let bpm = grid.bpm(atPosition: position)
            found.append((bpm, score(evidence, grid: grid, bpm: bpm)))
        }
        return found.sorted { $0.score > $1.score }
    }
}
