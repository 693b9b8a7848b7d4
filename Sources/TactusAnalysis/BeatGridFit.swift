import Foundation
import TactusDSP
import TactusDetector

/// Fits a constant beat grid (``BeatGrid``) to a song's onsets at a tempo known roughly (the
/// consensus), in three steps:
///
/// 1. **Drift.** The song is cut into overlapping segments; in each, the phase at which the onsets
///    are strongest on a grid of the known tempo is found. If the true period differs, that phase
///    drifts along the song at a constant rate: the drift that leaves the segments' phases most
///    alike (modulo half a period, so that off-beat segments agree too), refined by least
///    squares over the segments near its line, gives the true period.
/// 2. **Period.** Around that period, near the line's phase and half a period from it, a fine
///    search over the whole song (periods a quarter frame of drift apart at its end, phases an
///    eighth of a frame apart) keeps the grid whose beats fall on the strongest onsets.
/// 3. **Phase.** The strongest onsets are not always on the beat (a snare on 2 and 4, a bass or
///    a skank on the "and" can outweigh the kick), but a song starts on a beat: of the phases
///    where the onsets show a beat, the strongest within half a sixteenth note of where the
///    music begins (``musicStart(_:)``) is the beat; without one there, the strongest phase.
///    The phase is refined between phases by a parabola; the first beat then allows for the
///    envelope's lag.
///
/// The onsets are the song's spectral flux in five bands (``configuration``) at 100 frames per
/// second, whose frames comb-filter and autocorrelation compute anyway (``SharedFrontEnds``).
public enum BeatGridFit {
    /// The onset envelope a grid is fitted on: frames of 23.2 ms every 10 ms, the frames of the
    /// default comb-filter and autocorrelation sessions, so they are computed once for all.
    public static let configuration = OnsetStrengthConfiguration(bandEdgesHz: [30, 150, 600, 2_500, 10_000], frameRate: 100)
    /// Below this ``BeatGrid/clarity`` the song has no beat worth a grid (noise, speech, a drone).
    public static let minimumClarity = 1.25
    /// Length of the segments whose phases measure the drift.
    static let segmentSeconds = 8.0

    /// The grid of `envelope` near `bpm`, or nil when the song is shorter than eight beats or
    /// its onsets show no clear beat at that tempo.
    public static func fit(_ envelope: OnsetStrengthEnvelope, bpm: Double) -> BeatGrid? {
        let rate = envelope.frameRate
        guard bpm.isFinite, bpm > 0, rate > 0 else { return nil }
        let onset = OnsetTrack(envelope)
        let period = rate * 60 / bpm
        guard period >= 2, Double(onset.count) >= 8 * period else { return nil }
        let drifted = driftCorrected(onset, period: period, rate: rate)
        let strongest = refined(onset, period: drifted?.period ?? period, phase: drifted?.phase)
        // A frame stands for the time of its start, and an onset raises the envelope most in the
        // frame that holds it two thirds of the way along (where the Hann window's square rises
        // fastest): the beat is that much after the frame.
        let lag = configuration.frameSeconds * 2 / 3 * rate
        let anchored = musicStart(envelope).flatMap {
            onset.beatPhase(period: strongest.period, near: $0 - lag, strongest: strongest.phase)
        } ?? strongest.phase
        let found = onset.peakRefined(period: strongest.period, phase: anchored)
        let newBPM = rate * 60 / found.period
        let clarity = onset.clarity(period: found.period, best: found.score)
        guard abs(newBPM / bpm - 1) <= BeatGrid.tempoRange else { return nil }
        guard clarity >= minimumClarity else { return nil }
        let first = (found.phase + lag).truncatingRemainder(dividingBy: found.period)
        return BeatGrid(bpm: newBPM, firstBeatS: (first < 0 ? first + found.period : first) / rate, clarity: clarity)
    }

    /// Step 1: the period, and the phase modulo half a period (in frames), that the segments'
    /// phases at `period` point to, or nil when fewer than three segments show a beat.
    ///
    /// A segment whose strongest onsets fall on the off-beat (a snare on 2 and 4, a bass on the
    /// "and") has its phase half a period away, so the drift is read on phases modulo half a
    /// period: each phase an angle twice around the circle per period, the drift the one whose
    /// line leaves the segments' angles most alike (the longest mean vector), refined by least
    /// squares over the segments near that line.
    static func driftCorrected(_ onset: OnsetTrack, period: Double, rate: Double) -> (period: Double, phase: Double)? {
        let length = max(segmentSeconds * rate, 4 * period)
        var points: [SegmentPhase] = []
        var start = 0.0
        while start + length <= Double(onset.count) {
            let range = start..<(start + length)
            let scores = stride(from: 0.0, to: period, by: 0.25).map { ($0, onset.meanOnGrid(period: period, phase: $0, within: range)) }
            let mean = scores.reduce(0) { $0 + $1.1 } / Double(scores.count)
            if let best = scores.max(by: { $0.1 < $1.1 }), mean > 0, best.1 / mean > minimumClarity {
                points.append(SegmentPhase(time: start + length / 2, phase: best.0, weight: best.1 / mean - 1))
            }
            start += length / 2
        }
        guard points.count >= 3, let span = points.last.map({ $0.time - points[0].time }), span > 0 else { return nil }
        let half = period / 2
        // Drifts a sixteenth of half a period apart over the segments' span, within the tempo range.
        let step = half / 16 / span
        let steps = Int((BeatGrid.tempoRange / step).rounded(.up))
        let drifts = (-steps...steps).map { Double($0) * step }
        let lengths = drifts.map { SegmentPhase.agreement(points, drift: $0, modulo: half) }
        guard let best = lengths.indices.max(by: { lengths[$0] < lengths[$1] }), lengths[best] > 0 else { return nil }
        let drift = drifts[best]
        let centre = SegmentPhase.meanPhase(points, drift: drift, modulo: half)
        // Each segment's phase moved by whole half periods to its nearest to the line; those
        // within a sixth of half a period fit the line by least squares.
        let near: [SegmentPhase] = points.compactMap { point in
            let expected = centre + drift * point.time
            let moved = point.phase + ((expected - point.phase) / half).rounded() * half
            return abs(moved - expected) <= half / 6 ? SegmentPhase(time: point.time, phase: moved, weight: point.weight) : nil
        }
        let line = near.count >= 3 ? WeightedLine(near) : nil
        let slope = line?.slope ?? drift
        let intercept = line?.intercept ?? centre
        // Beats of period P' fall, modulo P, at a phase growing by (1 - P / P') per frame; the
        // line's phase at the start is the first beat's, moved by the drift up to it.
        return (period / (1 - slope), intercept / (1 - slope))
    }

    /// Step 2: the best grid over the whole song near `period` and, when known, near `phase`
    /// or half a period from it (which of the two is the strongest, the whole song decides).
    static func refined(_ onset: OnsetTrack, period: Double, phase: Double?) -> (period: Double, phase: Double, score: Double) {
        // A step of the period moves the song's last beat by a quarter frame.
        let beats = Double(onset.count) / period
        let step = 0.25 / beats
        let phases: [Double] = phase.map { known in
            [known, known + period / 2].flatMap { stride(from: $0 - 2, through: $0 + 2, by: 0.125).map { $0 } }
        } ?? stride(from: 0.0, to: period, by: 0.125).map { $0 }
        var best = (period: period, phase: phases[0], score: -Double.infinity)
        for offset in -8...8 {
            let candidate = period + Double(offset) * step
            for phase in phases {
                let score = onset.meanOnGrid(period: candidate, phase: phase)
                if score > best.score { best = (candidate, phase, score) }
            }
        }
        return best
    }

    /// How far below the song's mean level (dB) a frame is still silence before the music.
    static let silenceDB = 40.0

    /// The frame where the music begins: the first whose level comes within ``silenceDB`` of
    /// the song's mean level, or nil for a silent song.
    static func musicStart(_ envelope: OnsetStrengthEnvelope) -> Double? {
        let mean = envelope.meanSquare(frames: 0..<envelope.frameCount)
        guard mean > 0 else { return nil }
        let threshold = mean * pow(10, -silenceDB / 10)
        return (0..<envelope.frameCount).first { envelope.meanSquare(frames: $0..<($0 + 1)) >= threshold }.map(Double.init)
    }
}

/// A song's onset strength, the envelope's bands summed, read between frames by linear
/// interpolation. A frame stands for the time of its start.
struct OnsetTrack {
    private let values: [Double]

    init(_ envelope: OnsetStrengthEnvelope) {
        var values = [Double](repeating: 0, count: envelope.frameCount)
        for band in envelope.bands {
            for (frame, value) in band.enumerated() { values[frame] += Double(value) }
        }
        self.values = values
    }

    var count: Int { values.count }

    /// The mean onset strength at `phase + k × period` (frames) for every whole k that falls
    /// within `range` (default: the whole song).
    func meanOnGrid(period: Double, phase: Double, within range: Range<Double>? = nil) -> Double {
        let range = range ?? 0..<Double(values.count - 1)
        let lower = max(range.lowerBound, 0), upper = min(range.upperBound, Double(values.count - 1))
        var position = phase + ((lower - phase) / period).rounded(.up) * period
        var sum = 0.0, beats = 0.0
        while position < upper {
            let frame = Int(position), fraction = position - Double(frame)
            sum += values[frame] * (1 - fraction) + values[frame + 1] * fraction
            beats += 1
            position += period
        }
        return beats > 0 ? sum / beats : 0
    }

    /// The phase (frames) of the beat at `period`, given where the music begins: a piece starts
    /// on a beat, so of the phases at which the onsets show a beat (peaks of the onset strength
    /// over phases, ``BeatGridFit/minimumClarity`` times the mean or more), the strongest within
    /// an eighth of a period (half a sixteenth note) of `start`; nil when there is none there.
    ///
    /// The phase where the onsets are strongest is not always the beat: a snare on 2 and 4 or
    /// a bass on the "and" can outweigh the kick on the beat, while the song's first sound (a
    /// sequenced or recorded song starts on its first bar) sits on it.
    func beatPhase(period: Double, near start: Double, strongest: Double) -> Double? {
        let step = 0.125
        let phases = stride(from: 0.0, to: period, by: step).map { $0 }
        let values = phases.map { meanOnGrid(period: period, phase: $0) }
        let mean = values.reduce(0, +) / Double(max(values.count, 1))
        guard mean > 0 else { return nil }
        // How far apart two phases are on the circle of the period.
        let apart = { (one: Double, other: Double) in
            let difference = abs(one - other).truncatingRemainder(dividingBy: period)
            return min(difference, period - difference)
        }
        let peaks = values.indices.filter { index in
            let before = values[(index + values.count - 1) % values.count], after = values[(index + 1) % values.count]
            return values[index] >= before && values[index] >= after && values[index] >= BeatGridFit.minimumClarity * mean
                && apart(phases[index], start) <= period / 8
        }
        guard let best = peaks.max(by: { values[$0] < values[$1] }) else { return nil }
        // The strongest phase itself when it is that peak (kept at its finer position).
        return apart(strongest, phases[best]) <= step ? strongest : phases[best]
    }

    /// The grid at `period` and `phase` with the phase moved to the top of a parabola through
    /// its score and its neighbours' an eighth of a frame away, and the score at `phase`.
    func peakRefined(period: Double, phase: Double) -> (period: Double, phase: Double, score: Double) {
        let step = 0.125
        let score = meanOnGrid(period: period, phase: phase)
        let before = meanOnGrid(period: period, phase: phase - step)
        let after = meanOnGrid(period: period, phase: phase + step)
        let curvature = before - 2 * score + after
        let offset = curvature < 0 ? min(max(0.5 * (before - after) / curvature, -0.5), 0.5) : 0
        return (period, phase + offset * step, score)
    }

    /// `best` over the mean on the grids of every phase of `period` (half a frame apart).
    func clarity(period: Double, best: Double) -> Double {
        let phases = stride(from: 0.0, to: period, by: 0.5).map { meanOnGrid(period: period, phase: $0) }
        let mean = phases.reduce(0, +) / Double(max(phases.count, 1))
        return mean > 0 ? best / mean : 0
    }
}

/// Where the onsets of one segment of a song are strongest on a grid: the phase (frames), at the
/// segment's centre (frames), weighted by how clearly (the best mean over the mean, less 1).
struct SegmentPhase {
    var time: Double
    var phase: Double
    var weight: Double

    /// The phase of `point` with the line of slope `drift` taken off, as an angle once around
    /// the circle per `modulo`.
    static func angle(_ point: SegmentPhase, drift: Double, modulo: Double) -> Double {
        2 * Double.pi * (point.phase - drift * point.time) / modulo
    }

    /// How alike the phases are once the drift is taken off: the length of their weighted mean
    /// vector as angles modulo `modulo` (1: all the same).
    static func agreement(_ points: [SegmentPhase], drift: Double, modulo: Double) -> Double {
        let total = points.reduce(0) { $0 + $1.weight }
        let x = points.reduce(0) { $0 + $1.weight * cos(angle($1, drift: drift, modulo: modulo)) }
        let y = points.reduce(0) { $0 + $1.weight * sin(angle($1, drift: drift, modulo: modulo)) }
        return total > 0 ? (x * x + y * y).squareRoot() / total : 0
    }

    /// The weighted circular mean of the phases with the drift taken off, in `0..<modulo`.
    static func meanPhase(_ points: [SegmentPhase], drift: Double, modulo: Double) -> Double {
        let x = points.reduce(0) { $0 + $1.weight * cos(angle($1, drift: drift, modulo: modulo)) }
        let y = points.reduce(0) { $0 + $1.weight * sin(angle($1, drift: drift, modulo: modulo)) }
        let turn = atan2(y, x) / (2 * Double.pi)
        return (turn < 0 ? turn + 1 : turn) * modulo
    }
}

/// The least-squares straight line through weighted points.
struct WeightedLine {
    let slope: Double
    let intercept: Double

    init?(_ points: [SegmentPhase]) {
        let total = points.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return nil }
        let meanTime = points.reduce(0) { $0 + $1.weight * $1.time } / total
        let meanPhase = points.reduce(0) { $0 + $1.weight * $1.phase } / total
        let spread = points.reduce(0) { $0 + $1.weight * ($1.time - meanTime) * ($1.time - meanTime) }
        guard spread > 0 else { return nil }
        slope = points.reduce(0) { $0 + $1.weight * ($1.time - meanTime) * ($1.phase - meanPhase) } / spread
        intercept = meanPhase - slope * meanTime
    }

    func value(at time: Double) -> Double { intercept + slope * time }
}
