import Foundation
import TactusDSP
import TactusDetector

/// What ``TempoVote`` needs to know: window layout, tempo range, metrical decision and thresholds.
public struct TempoVoteConfiguration: Sendable, Hashable {
    /// Length of each analysis window, in seconds (`window_s`).
    public var windowSeconds: Double
    /// Seconds between the starts of consecutive windows (`hop_s`).
    public var hopSeconds: Double
    /// The beat's tempo range (`min_bpm`, `max_bpm`).
    public var minBPM: Double
    public var maxBPM: Double
    /// How the song's evidence decides the metrical level.
    public var metrical: MetricalDecision
    /// Spacing of the tempo grid, in octaves (0.005 octave is about 0.35 % of tempo).
    public var gridOctaves: Double
    /// Windows whose mean squared sample is below this are silent (1e-16 is -160 dBFS: quiet
    /// recordings at -90 dBFS are still music).
    public var silenceMeanSquare: Double
    /// Below this strength a window, or the song, has no tempo.
    public var minimumSalience: Double

    public init(
        windowSeconds: Double = 12, hopSeconds: Double = 3, minBPM: Double = 60, maxBPM: Double = 200,
        metrical: MetricalDecision = MetricalDecision(groupingWeight: 0.5, subdivisionWeight: 1, priorBPM: 140, priorOctaves: 1),
        gridOctaves: Double = 0.005, silenceMeanSquare: Double = 1e-16, minimumSalience: Double = 0.03
    ) {
        self.windowSeconds = windowSeconds
        self.hopSeconds = hopSeconds
        self.minBPM = minBPM
        self.maxBPM = maxBPM
        self.metrical = metrical
        self.gridOctaves = gridOctaves
        self.silenceMeanSquare = silenceMeanSquare
        self.minimumSalience = minimumSalience
    }
}

/// The windowed vote the `default` presets share: a song's envelope (onset strength, beat
/// strength: whatever the detector measures) is cut into overlapping windows, the detector
/// measures each window's periodicities, and the song's tempo is decided from all windows
/// together, so that intros, breaks and outros do not decide the result (the multi-window
/// analysis the MoovMe report's future work asks for).
///
/// A detector plugs in only its **evidence function**: given one ``EnvelopeWindow`` and the
/// vote's ``TempoGrid`` (which spans a third of `minBPM` to three times `maxBPM`, so that
/// groupings and subdivisions of every beat candidate can be read), it returns its
/// ``PeriodicityEvidence`` for the window. For example, a plain autocorrelation:
///
/// ```swift
/// let autocorrelation = EnvelopeAutocorrelation()
/// let result = vote.decide(envelope) { window, grid in
///     let r = autocorrelation.of(window.bands[0])
///     guard r[0] > 0 else { return .none(count: grid.count) }
///     let curve = grid.bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / Double(r[0]) }
///     return PeriodicityEvidence(strength: curve.max() ?? 0, curve: curve)
/// }
/// ```
///
/// Per window: the energy (mean squared samples), the strength (the evidence's, clamped to
/// 0...1) and the window's tempo (the ``MetricalDecision`` on the window's evidence alone; nil
/// when the window is silent or weaker than `minimumSalience`). For the song: the evidence of
/// every audible window is averaged, each curve normalised to its largest value between half
/// `minBPM` and twice `maxBPM`, and the ``MetricalDecision`` picks the beat. The candidates
/// are the best peaks of the decision's score with the winner's octave relatives (x2, /2, x3,
/// /3 within the range) always included, strengths relative to the winner.
///
/// The confidence is the product of how periodic the song is (the square root of the mean
/// window strength) and how clearly the decision won, `0.25 + 0.75 * margin`, where the margin is 1 minus the ratio
/// of the best other peak's score to the winner's: an octave or 3:2 competitor as good as the
/// winner quarters the confidence.
public struct TempoVote: Sendable {
    /// A detector's evidence function (see ``TempoVote``).
    public typealias Evidence = (_ window: EnvelopeWindow, _ grid: TempoGrid) -> PeriodicityEvidence

    public let configuration: TempoVoteConfiguration
    /// The tempi the evidence is measured at: a third of `minBPM` to three times `maxBPM`.
    public let grid: TempoGrid
    /// The grid indices of the beat candidates (`minBPM...maxBPM`).
    private let beatIndices: Range<Int>
    /// The grid indices each curve is normalised over (half `minBPM` to twice `maxBPM`).
    private let normalisingIndices: Range<Int>

    public init(configuration: TempoVoteConfiguration) {
        precondition(configuration.minBPM > 0 && configuration.minBPM < configuration.maxBPM)
        precondition(configuration.windowSeconds > 0 && configuration.hopSeconds > 0 && configuration.gridOctaves > 0)
        self.configuration = configuration
        grid = TempoGrid(
            minBPM: configuration.minBPM / 3, maxBPM: configuration.maxBPM * 3, stepOctaves: configuration.gridOctaves)
        beatIndices = grid.indices(within: configuration.minBPM...configuration.maxBPM)
        normalisingIndices = grid.indices(within: (configuration.minBPM / 2)...(configuration.maxBPM * 2))
    }

    /// The window layout for a song of `frameCount` envelope frames: windows of
    /// `windowSeconds` every `hopSeconds`, plus one window ending at the song's end when the
    /// regular ones leave a tail; a single window when the song is shorter than one window.
    public func windowRanges(frameCount: Int, frameRate: Double) -> [Range<Int>] {
        let length = max(1, Int((configuration.windowSeconds * frameRate).rounded()))
        let hop = max(1, Int((configuration.hopSeconds * frameRate).rounded()))
        guard frameCount > length else { return frameCount > 0 ? [0..<frameCount] : [] }
        var ranges = stride(from: 0, through: frameCount - length, by: hop).map { $0..<($0 + length) }
        if let last = ranges.last, last.upperBound < frameCount {
            ranges.append((frameCount - length)..<frameCount)
        }
        return ranges
    }

    /// Runs `evidence` over every window of `envelope` and decides the song's tempo: the
    /// detector's whole output (tempo or the reason there is none, confidence, candidates,
    /// one ``AnalysisWindow`` per window).
    public func decide(_ envelope: OnsetStrengthEnvelope, evidence: Evidence) -> DetectorOutput {
        let minimumFrames = Int((2 * 60 / configuration.minBPM * envelope.frameRate).rounded(.up))
        guard envelope.frameCount > minimumFrames else {
            return DetectorOutput(bpm: nil, reason: "too short", confidence: 0, candidates: [], windows: [])
        }
        var windows: [AnalysisWindow] = []
        var total = PeriodicityEvidence.none(count: grid.count)
        var audibleWindows = 0
        for range in windowRanges(frameCount: envelope.frameCount, frameRate: envelope.frameRate) {
            let startSample = envelope.frameStart(range.lowerBound)
            let endSample = range.upperBound >= envelope.frameCount ? envelope.sampleCount : envelope.frameStart(range.upperBound)
            var record = AnalysisWindow(
                startS: Double(startSample) / envelope.sampleRate,
                durationS: Double(endSample - startSample) / envelope.sampleRate,
                energy: envelope.meanSquare(frames: range), bpm: nil, strength: 0)
            if record.energy >= configuration.silenceMeanSquare {
                let window = EnvelopeWindow(
                    bands: envelope.bands.map { $0[range] }, frameRate: envelope.frameRate, startFrame: range.lowerBound)
                var found = evidence(window, grid)
                precondition(found.beat.count == grid.count, "an evidence function returns one value per grid tempo")
                found = Self.finite(found)
                record.strength = found.strength
                if found.strength >= configuration.minimumSalience {
                    record.bpm = decision(found.normalised(over: normalisingIndices))?.best.bpm
                }
                total.add(found)
                audibleWindows += 1
            }
            windows.append(record)
        }
        guard audibleWindows > 0 else {
            return DetectorOutput(bpm: nil, reason: "silence", confidence: 0, candidates: [], windows: windows)
        }
        let periodicity = total.strength / Double(audibleWindows)
        guard periodicity >= configuration.minimumSalience,
            let decided = decision(total.normalised(over: normalisingIndices))
        else {
            return DetectorOutput(bpm: nil, reason: "no periodicity", confidence: 0, candidates: [], windows: windows)
        }
        let margin = decided.peaks.dropFirst()
            .first { !TempoRelation.matches($0.bpm, decided.best.bpm) }
            .map { 1 - min(max($0.value / decided.best.value, 0), 1) } ?? 1
        let confidence = min(max(periodicity, 0), 1).squareRoot() * (0.5 + 0.5 * margin)
        return DetectorOutput(
            bpm: decided.best.bpm, confidence: confidence,
            candidates: candidates(decided.peaks, best: decided.best), windows: windows)
    }

    /// Clamps the strength to 0...1 and replaces non-finite curve values by 0.
    private static func finite(_ evidence: PeriodicityEvidence) -> PeriodicityEvidence {
        func clean(_ curve: [Double]) -> [Double] { curve.map { $0.isFinite ? $0 : 0 } }
        let strength = evidence.strength.isFinite ? min(max(evidence.strength, 0), 1) : 0
        return PeriodicityEvidence(
            strength: strength, beat: clean(evidence.beat), grouping: clean(evidence.grouping),
            subdivision: clean(evidence.subdivision))
    }

    // MARK: The decision's peaks

    private struct GridPeak {
        var bpm: Double
        var value: Double
    }

    /// The metrical decision's choices (the song's periodicities in the beat range), strongest
    /// first; nil when there is none.
    private func decision(_ evidence: PeriodicityEvidence) -> (best: GridPeak, peaks: [GridPeak])? {
        let found = configuration.metrical.choices(evidence, grid: grid, range: beatIndices)
            .filter { $0.score > 0 }
            .map { GridPeak(bpm: $0.bpm, value: $0.score) }
        guard let best = found.first else { return nil }
        return (best, found)
    }

    private func candidates(_ all: [GridPeak], best: GridPeak) -> [TempoCandidate] {
        var chosen = [best]
        func isNew(_ bpm: Double) -> Bool {
            !chosen.contains { TempoRelation.matches(bpm, $0.bpm) }
        }
        // The winner's octave relatives first: the strongest peak within 4 % of each multiple.
        for factor in [2.0, 0.5, 3.0, 1.0 / 3.0] {
            let target = best.bpm * factor
            guard target >= configuration.minBPM * 0.96, target <= configuration.maxBPM * 1.04 else { continue }
            if let peak = all.first(where: { TempoRelation.matches($0.bpm, target) }), isNew(peak.bpm) {
                chosen.append(peak)
            }
        }
        for peak in all where chosen.count < 5 && isNew(peak.bpm) {
            chosen.append(peak)
        }
        let top = max(best.value, .leastNonzeroMagnitude)
        return chosen.prefix(5)
            .map { TempoCandidate(bpm: $0.bpm, strength: min(max($0.value / top, 0), 1)) }
            .sorted { $0.strength > $1.strength }
    }
}
