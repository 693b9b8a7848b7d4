import Foundation

/// Where a song's tempo holds and where it changes: segments in time order, each steady (one
/// tempo) or a ramp (a tempo going steadily from one value to another, as in an accelerando or
/// a ritardando), read from the detectors' per-window tempi at the consensus' metrical level.
///
/// A steady song is one segment, ``stable``; its ``minBPM`` and ``maxBPM`` are the range the
/// windows' tempi keep to (a live recording's drift). Made by ``TempoMap/of(_:consensus:advisory:)``.
public struct TempoMap: Sendable, Hashable, Codable {
    /// A stretch of the song with one tempo, or a tempo going steadily from `startBPM` to `endBPM`.
    public struct Segment: Sendable, Hashable, Codable {
        public var startS: Double
        public var endS: Double
        /// The tempo at the segment's start (equal to ``endBPM`` in a steady segment).
        public var startBPM: Double
        /// The tempo at the segment's end.
        public var endBPM: Double

        public init(startS: Double, endS: Double, startBPM: Double, endBPM: Double) {
            self.startS = startS
            self.endS = endS
            self.startBPM = startBPM
            self.endBPM = endBPM
        }

        /// One tempo throughout.
        public var isSteady: Bool { startBPM == endBPM }

        enum CodingKeys: String, CodingKey {
            case startS = "start_s", endS = "end_s", startBPM = "start_bpm", endBPM = "end_bpm"
        }
    }

    /// The segments, in time order, from the song's start to its end.
    public var segments: [Segment]
    /// True when the song keeps one tempo throughout (one steady segment).
    public var stable: Bool
    /// The slowest and fastest tempo of the song's windows (after a median of three, so that a
    /// window read at another metrical level does not widen the range).
    public var minBPM: Double
    public var maxBPM: Double

    public init(segments: [Segment], minBPM: Double, maxBPM: Double) {
        self.segments = segments
        self.stable = segments.count == 1 && segments[0].isSteady
        self.minBPM = minBPM
        self.maxBPM = maxBPM
    }

    enum CodingKeys: String, CodingKey {
        case segments, stable, minBPM = "min_bpm", maxBPM = "max_bpm"
    }
}

extension TempoMap {
    /// What the map treats as a change, and how it weighs a change against the windows' noise.
    public struct Settings: Sendable, Hashable {
        /// Smallest difference between two segments' tempi (or between a ramp's ends) reported
        /// as a change, as a ratio: 0.02 is 2 %. Closer tempi are one segment.
        public var minimumChange = 0.02
        /// The windows' tempi never count as noisier than this (a ratio), so that a song read
        /// with perfectly steady windows is not cut at the first small wobble.
        public var noiseFloor = 0.01
        /// Fewest windows a segment may span (4: 12 s of windows every 3 s).
        public var minimumWindows = 4
        /// A moment further from its segment than this many noise widths costs no more than
        /// one this far: a few windows read at another level cannot pull a segment of their own.
        public var outlierCap = 1.5
        /// Fewest readings a detector needs on each side of a change to hold it back (see
        /// ``TempoMap/of(_:consensus:advisory:settings:)``, step 5).
        public var vetoReadings = 3

        public init() {}
    }

    /// The tempo map of one song from its `analyses` (the windows of every voting detector)
    /// around the `consensus` tempo; nil when no voting detector has windows with tempi.
    ///
    /// 1. **At the consensus' level.** Each detector's windows are moved by the octave that takes
    ///    its own tempo nearest to the consensus (a detector reading the song at half the
    ///    consensus has its windows doubled), never by any other ratio: a song that changes
    ///    from 100 to 130 BPM must stay a change, not become a 4:3 reading.
    /// 2. **One tempo per moment.** On the grid of the windows' centres, each detector gives the
    ///    tempo of its window nearest in time, moved by octaves to within half an octave of the
    ///    consensus, or to the consensus' level when it is a 3:2 or 4:3 reading of it (within
    ///    the minimum change). The tempo most detectors agree with (within 4 %) wins and the agreeing ones
    ///    are averaged (in log tempo), each detector's readings first moved by its steady bias
    ///    against the others (``TempoSeries/biases(_:detectors:)``). Then a Viterbi pass over each moment's octave keeps the
    ///    line smooth (a ritardando slowing past half an octave below the consensus stays one
    ///    line). Changes of more than half an octave from the consensus read as the nearer octave.
    /// 3. **Segments.** The series of log tempi is cut into segments of at least
    ///    ``Settings/minimumWindows`` windows, each steady or a straight ramp, by optimal
    ///    partitioning: the cut that minimises the squared residuals over the noise (estimated
    ///    from the series itself, between windows that share no audio, never below
    ///    ``Settings/noiseFloor``; each capped at ``Settings/outlierCap``, and weighted by how
    ///    many detectors agree at that moment) plus a penalty of log(n) per parameter (the
    ///    Bayesian information criterion), so a change is kept only when the windows show it
    ///    beyond their noise.
    /// 4. **Changes that matter.** A ramp whose ends differ by less than the minimum change is
    ///    steady; neighbouring steady segments closer than it are joined, and so are
    ///    neighbouring ramps that one straight ramp describes within half of it.
    /// 5. **Changes every detector sees.** A real change moves every detector alike. A step or
    ///    a ramp is dropped when one detector holds still across it: its readings on the two
    ///    sides (of a ramp, its two halves) differ by less than half the change the map shows,
    ///    while spreading less than that on each side (at least ``Settings/vetoReadings`` on
    ///    each). So two detectors that wander on a piano piece, where a third reads it steady
    ///    to a tenth of a per cent, do not make it a ramp; a detector too noisy to tell holds
    ///    nothing back.
    public static func of(
        _ analyses: [TempoAnalysis], consensus: Double?, advisory: Set<String> = [], settings: Settings = Settings()
    ) -> TempoMap? {
        guard let consensus, consensus > 0, consensus.isFinite else { return nil }
        let voters = analyses.filter { $0.bpm != nil && !advisory.contains($0.detector) && $0.windows.contains { $0.bpm != nil } }
        let series = TempoSeries(voters, consensus: consensus, settings: settings)
        guard !series.points.isEmpty else { return nil }
        let end = voters.flatMap(\.windows).map { $0.startS + $0.durationS }.max() ?? 0
        let segments = Partition(series: series, settings: settings).segments(songEnd: end)
        let smoothed = series.medianOfThree()
        return TempoMap(segments: segments, minBPM: exp2(smoothed.min() ?? 0), maxBPM: exp2(smoothed.max() ?? 0))
    }
}

/// The song's tempo over time, one value a moment: log2 BPM on the grid of the windows' centres.
struct TempoSeries {
    struct Point {
        var time: Double
        var log2BPM: Double
        /// How much the moment counts: a half, and a half more times the share of its detectors
        /// that agree on it (1: all of them).
        var weight: Double
        /// Each detector's own reading at this moment, at the consensus' level with its bias
        /// taken out (nil where it has no window here): what step 5 of the map asks of each.
        var readings: [Double?]
    }

    var points: [Point] = []
    /// How many moments apart two windows no longer overlap (1 when they never do): the
    /// readings of overlapping windows share audio, so their errors are alike.
    var independentLag = 1

    init(_ voters: [TempoAnalysis], consensus: Double, settings: TempoMap.Settings) {
        let reference = log2(consensus)
        // Each detector's windows at the consensus' octave: (centre, log2 tempo, weight).
        // In time order, whatever order they came in; windows with no finite time or tempo left out.
        let tracks: [[(time: Double, value: Double, weight: Double)]] = voters.compactMap { analysis in
            guard let tempo = analysis.bpm, tempo > 0, tempo.isFinite else { return nil }
            let shift = (reference - log2(tempo)).rounded()
            return analysis.windows.compactMap { window in
                let time = window.startS + window.durationS / 2
                guard let bpm = window.bpm, bpm > 0, bpm.isFinite, time.isFinite else { return nil }
                return (time, log2(bpm) + shift, window.strength.isFinite ? max(window.strength, 1e-3) : 1e-3)
            }.sorted { $0.time < $1.time }
        }
        guard let longest = tracks.max(by: { $0.count < $1.count }), !longest.isEmpty else { return }
        // At most maximumMoments moments, evenly chosen: the partition's cost grows with the cube
        // of their number, and the windows come from workers.
        let stride = max((longest.count + Self.maximumMoments - 1) / Self.maximumMoments, 1)
        let grid = Swift.stride(from: 0, to: longest.count, by: stride).map { longest[$0].time }
        let spacing = grid.count > 1 ? (grid.last! - grid.first!) / Double(grid.count - 1) : .infinity
        let durations = voters.flatMap(\.windows).map(\.durationS).filter(\.isFinite).sorted()
        if spacing.isFinite, spacing > 0, !durations.isEmpty {
            independentLag = min(max(Int((durations[durations.count / 2] / spacing).rounded(.up)), 1), 16)
        }
        // Windows of one moment agree within the consensus' own tolerance (4 %).
        let agreement = log2(1 + TempoRelation.defaultTolerance)
        let metre = log2(1 + settings.minimumChange)
        // Each detector's reading at each moment (nil where it has no window near it).
        let readings: [[(value: Double, weight: Double)?]] = grid.map { time in
            tracks.map { track in
                guard let nearest = Self.nearest(to: time, in: track), abs(nearest.time - time) <= spacing / 2 + 1e-9 else { return nil }
                return (Self.atConsensusLevel(nearest.value, reference: reference, within: metre), nearest.weight)
            }
        }
        let offsets = Self.biases(readings, detectors: tracks.count)
        for (time, moment) in zip(grid, readings) {
            let votes = zip(moment, offsets).compactMap { reading, offset in reading.map { ($0.value - offset, $0.weight) } }
            guard !votes.isEmpty else { continue }
            // The value most detectors agree with (each detector one vote, strength breaking ties),
            // and the mean of those that agree: one detector's window at another level is outvoted.
            func support(_ target: Double) -> (count: Int, weight: Double) {
                let agreeing = votes.filter { abs($0.0 - target) <= agreement }
                return (agreeing.count, agreeing.reduce(0) { $0 + $1.1 })
            }
            let winner = votes.max { support($0.0) < support($1.0) }!.0
            let agreeing = votes.filter { abs($0.0 - winner) <= agreement }
            let mean = agreeing.reduce(0) { $0 + $1.0 } / Double(agreeing.count)
            points.append(Point(
                time: time, log2BPM: mean, weight: 0.5 + 0.5 * Double(agreeing.count) / Double(votes.count),
                // Each reading at the octave nearest the moment's tempo.
                readings: zip(moment, offsets).map { reading, offset in
                    reading.map { $0.value - offset }.map { $0 + (mean - $0).rounded() }
                }))
        }
        keepOctave()
    }

    /// Each detector's steady bias, in log2 tempo: how far its readings sit from the moments'
    /// median, as the median over the moments where it agrees with that median (within the
    /// consensus' tolerance); refined a few times (each bias moves the medians) and centred
    /// so that the biases sum to zero. Detectors measure a tempo a little differently (one
    /// reads a swung song 3 % faster than another all through); without this, the moments'
    /// mean would step whenever one of them drops out or is outvoted, and the map would show
    /// a change no detector saw. A real change moves every detector alike and leaves the
    /// biases as they are.
    static func biases(_ readings: [[(value: Double, weight: Double)?]], detectors: Int) -> [Double] {
        var biases = [Double](repeating: 0, count: detectors)
        guard detectors > 1 else { return biases }
        let agreement = log2(1 + TempoRelation.defaultTolerance)
        for _ in 0..<4 {
            var differences = [[Double]](repeating: [], count: detectors)
            for moment in readings {
                let corrected = moment.indices.map { index in moment[index].map { $0.value - biases[index] } }
                guard corrected.compactMap({ $0 }).count > 1, let middle = median(corrected.compactMap { $0 }) else { continue }
                for (index, value) in corrected.enumerated() {
                    if let value, abs(value - middle) <= agreement { differences[index].append(value - middle) }
                }
            }
            for index in biases.indices { biases[index] += median(differences[index]) ?? 0 }
            let mean = biases.reduce(0, +) / Double(detectors)
            biases = biases.map { $0 - mean }
        }
        return biases
    }

    /// The median of `values`; nil when there are none.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted(), half = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[half - 1] + sorted[half]) / 2 : sorted[half]
    }

    /// The most moments a series keeps (a song of 12.8 minutes at one window every 3 s; a longer
    /// one keeps every second window, or fewer).
    static let maximumMoments = 256

    /// The window of `track` (in time order) whose centre is nearest `time`, by bisection.
    static func nearest(
        to time: Double, in track: [(time: Double, value: Double, weight: Double)]
    ) -> (time: Double, value: Double, weight: Double)? {
        guard !track.isEmpty else { return nil }
        var low = 0, high = track.count - 1
        while low < high {
            let middle = (low + high) / 2
            if track[middle].time < time { low = middle + 1 } else { high = middle }
        }
        guard low > 0, abs(track[low - 1].time - time) <= abs(track[low].time - time) else { return track[low] }
        return track[low - 1]
    }

    /// `value` (a log2 tempo) moved by octaves to within half an octave of `reference`, or to
    /// `reference`'s own level when it is a 3:2, 4:3, 3:4 or 2:3 reading of a tempo within
    /// `within` of it: a window that hears the bar's thirds or a dotted beat, not a tempo change
    /// (so a change by exactly such a ratio, a metric modulation, reads as no change).
    static func atConsensusLevel(_ value: Double, reference: Double, within: Double) -> Double {
        for ratio in [2.0 / 3, 3.0 / 4, 4.0 / 3, 3.0 / 2] {
            let related = value + log2(ratio)
            let folded = related + (reference - related).rounded()
            if abs(folded - reference) <= within { return folded }
        }
        return value + (reference - value).rounded()
    }

    /// Moves points by an octave where that makes the tempo line smoother, by Viterbi over each
    /// point's octave (-1, 0 or +1): the cost is the line's total movement in log tempo, plus a
    /// little for each point moved. A ritardando that slows past half an octave below the
    /// consensus stays one line (its points would otherwise jump up an octave), while one
    /// point read at another level moves no other.
    private mutating func keepOctave() {
        guard points.count > 1 else { return }
        let shifts = [-1.0, 0, 1], moved = 0.05
        var cost = shifts.map { abs($0) * moved }
        var back: [[Int]] = []
        for index in points.indices.dropFirst() {
            let previous = points[index - 1].log2BPM, value = points[index].log2BPM
            var next = [Double](), from = [Int]()
            for shift in shifts {
                let steps = shifts.indices.map { cost[$0] + abs(value + shift - previous - shifts[$0]) }
                let best = steps.indices.min { steps[$0] < steps[$1] }!
                next.append(steps[best] + abs(shift) * moved)
                from.append(best)
            }
            cost = next
            back.append(from)
        }
        var state = cost.indices.min { cost[$0] < cost[$1] }!
        for index in points.indices.reversed() {
            points[index].log2BPM += shifts[state]
            points[index].readings = points[index].readings.map { $0.map { $0 + shifts[state] } }
            if index > 0 { state = back[index - 1][state] }
        }
    }

    /// The log tempi after a running median of three (the ends kept).
    func medianOfThree() -> [Double] {
        let values = points.map(\.log2BPM)
        guard values.count >= 3 else { return values }
        return values.indices.map { index in
            guard index > 0 && index < values.count - 1 else { return values[index] }
            return values[(index - 1)...(index + 1)].sorted()[1]
        }
    }
}

/// Optimal partitioning of a ``TempoSeries`` into steady segments and straight ramps.
struct Partition {
    let series: TempoSeries
    let settings: TempoMap.Settings

    /// A fitted run of points `first...last`: its cost and the model's value at each end.
    private struct Fit {
        var first: Int
        var last: Int
        var cost: Double
        var startValue: Double
        var endValue: Double
    }

    /// The segments, the last ending at `songEnd`.
    func segments(songEnd: Double) -> [TempoMap.Segment] {
        let points = series.points
        let count = points.count
        let minimum = max(settings.minimumWindows, 1)
        let noise = max(Self.noise(points.map(\.log2BPM), lag: series.independentLag), log2(1 + settings.noiseFloor))
        let penalty = log(Double(max(count, 2)))
        let cap = settings.outlierCap * settings.outlierCap
        /// The cost of residuals `r` (weighted by the points' agreement), each capped.
        func cost(_ first: Int, _ last: Int, _ model: (Double) -> Double) -> Double {
            (first...last).reduce(0) { total, index in
                let residual = (points[index].log2BPM - model(points[index].time)) / noise
                return total + points[index].weight * min(residual * residual, cap)
            }
        }
        /// The run `first...last` as a steady run or a ramp (weighted least squares), whichever
        /// costs less with a ramp paying one parameter more.
        func fit(_ first: Int, _ last: Int) -> Fit {
            let run = points[first...last]
            let weight = run.reduce(0) { $0 + $1.weight }
            let mean = run.reduce(0) { $0 + $1.weight * $1.log2BPM } / weight
            let flat = cost(first, last) { _ in mean } + penalty
            let meanTime = run.reduce(0) { $0 + $1.weight * $1.time } / weight
            let spread = run.reduce(0) { $0 + $1.weight * ($1.time - meanTime) * ($1.time - meanTime) }
            guard spread > 1e-9 else { return Fit(first: first, last: last, cost: flat, startValue: mean, endValue: mean) }
            let slope = run.reduce(0) { $0 + $1.weight * ($1.time - meanTime) * ($1.log2BPM - mean) } / spread
            let line = { (time: Double) in mean + slope * (time - meanTime) }
            let sloped = cost(first, last, line) + 2 * penalty
            if sloped < flat {
                return Fit(first: first, last: last, cost: sloped, startValue: line(points[first].time), endValue: line(points[last].time))
            }
            return Fit(first: first, last: last, cost: flat, startValue: mean, endValue: mean)
        }
        // best[j]: the cheapest partition of points 0..<j; each segment also pays for its cut.
        var best = [Double](repeating: .infinity, count: count + 1)
        var previous = [Int](repeating: -1, count: count + 1)
        var fits = [Fit?](repeating: nil, count: count + 1)
        best[0] = -penalty
        for end in stride(from: min(minimum, count), through: count, by: 1) {
            for start in stride(from: 0, through: end - min(minimum, count), by: 1) where best[start].isFinite {
                let run = fit(start, end - 1)
                let total = best[start] + run.cost + penalty
                if total < best[end] {
                    best[end] = total
                    previous[end] = start
                    fits[end] = run
                }
            }
        }
        var runs: [Fit] = []
        var end = count
        while end > 0, let run = fits[end] {
            runs.insert(run, at: 0)
            end = previous[end]
        }
        return joined(runs.map(settle), songEnd: songEnd)
    }

    /// The straight line through points `first...last` (least squares) if no point is further
    /// from it than half the minimum change: a ramp that two neighbouring ramps make together.
    private func line(_ first: Int, _ last: Int) -> Fit? {
        let points = series.points[first...last]
        let n = Double(points.count)
        let meanTime = points.reduce(0) { $0 + $1.time } / n, meanValue = points.reduce(0) { $0 + $1.log2BPM } / n
        let spread = points.reduce(0) { $0 + ($1.time - meanTime) * ($1.time - meanTime) }
        guard spread > 1e-9 else { return nil }
        let slope = points.reduce(0) { $0 + ($1.time - meanTime) * ($1.log2BPM - meanValue) } / spread
        let value = { (time: Double) in meanValue + slope * (time - meanTime) }
        guard points.allSatisfy({ abs($0.log2BPM - value($0.time)) <= log2(1 + settings.minimumChange) / 2 }) else { return nil }
        return Fit(first: first, last: last, cost: 0, startValue: value(points.first!.time), endValue: value(points.last!.time))
    }

    /// A ramp whose ends differ by less than the minimum change, or across whose halves a
    /// detector holds still, made steady.
    private func settle(_ fit: Fit) -> Fit {
        let points = series.points
        let middle = (fit.first + fit.last) / 2
        let first = points[fit.first].time, last = points[fit.last].time
        let meanTime = { (run: ClosedRange<Int>) in points[run].reduce(0) { $0 + $1.time } / Double(run.count) }
        // What the ramp's line says between the means of its two halves.
        let change = last > first
            ? (fit.endValue - fit.startValue) * (meanTime((middle + 1)...fit.last) - meanTime(fit.first...middle)) / (last - first) : 0
        guard abs(fit.endValue - fit.startValue) < log2(1 + settings.minimumChange)
            || someDetectorHoldsStill(fit.first...middle, (middle + 1)...fit.last, change: change) else { return fit }
        return steady(fit.first, fit.last)
    }

    /// Whether one detector, with at least ``TempoMap/Settings/vetoReadings`` readings in each of
    /// the runs of points `before` and `after`, reads them alike where the map sees `change`
    /// (log2 tempo) between them: its medians differ by less than half of it, and its readings
    /// spread less than that about each median (median absolute deviation).
    private func someDetectorHoldsStill(_ before: ClosedRange<Int>, _ after: ClosedRange<Int>, change: Double) -> Bool {
        let points = series.points, half = abs(change) / 2
        guard half > 0, let detectors = points.first?.readings.count else { return false }
        return (0..<detectors).contains { detector in
            let sides = [before, after].map { run in points[run].compactMap { $0.readings[detector] } }
            guard sides.allSatisfy({ $0.count >= settings.vetoReadings }) else { return false }
            let medians = sides.map { TempoSeries.median($0)! }
            let spreads = zip(sides, medians).map { side, median in TempoSeries.median(side.map { abs($0 - median) })! }
            return abs(medians[1] - medians[0]) < half && spreads.allSatisfy { $0 < half }
        }
    }

    /// Points `first...last` as one steady run at their mean.
    private func steady(_ first: Int, _ last: Int) -> Fit {
        let values = series.points[first...last].map(\.log2BPM)
        let mean = values.reduce(0, +) / Double(values.count)
        return Fit(first: first, last: last, cost: 0, startValue: mean, endValue: mean)
    }

    /// Neighbouring steady runs closer than the minimum change, or between which a detector
    /// holds still, joined; neighbouring ramps that
    /// one straight line describes within half of it joined, and the runs made segments:
    /// each boundary halfway between the last centre of one and the first of the next.
    private func joined(_ runs: [Fit], songEnd: Double) -> [TempoMap.Segment] {
        var merged: [Fit] = []
        for run in runs {
            if let last = merged.last, last.startValue == last.endValue, run.startValue == run.endValue,
               abs(run.startValue - last.startValue) < log2(1 + settings.minimumChange)
                || someDetectorHoldsStill(last.first...last.last, run.first...run.last, change: run.startValue - last.startValue) {
                merged[merged.count - 1] = steady(last.first, run.last)
            } else if let last = merged.last, last.startValue != last.endValue, run.startValue != run.endValue,
                      let ramp = line(last.first, run.last) {
                merged[merged.count - 1] = ramp
            } else {
                merged.append(run)
            }
        }
        let points = series.points
        let boundaries = zip(merged, merged.dropFirst()).map(boundary)
        return merged.enumerated().map { index, run in
            let start = index == 0 ? 0 : boundaries[index - 1]
            let end = index == merged.count - 1 ? max(songEnd, points[run.last].time) : boundaries[index]
            // A ramp's tempo at its boundaries (at the song's ends, at the first and last window).
            let first = points[run.first].time, last = points[run.last].time
            let slope = last > first ? (run.endValue - run.startValue) / (last - first) : 0
            let value = { (time: Double) in exp2(run.startValue + slope * (time - first)) }
            return TempoMap.Segment(
                startS: start, endS: end, startBPM: value(index == 0 ? first : start),
                endBPM: value(index == merged.count - 1 ? last : end))
        }
    }

    /// Where run `before` ends and `after` begins: halfway between their windows' centres, or
    /// where a ramp's line meets the steady tempo beside it when that lies between them (the
    /// knee of a ritardando).
    private func boundary(_ before: Fit, _ after: Fit) -> Double {
        let points = series.points
        let gap = points[before.last].time...points[after.first].time
        let halfway = (gap.lowerBound + gap.upperBound) / 2
        let beforeSteady = before.startValue == before.endValue, afterSteady = after.startValue == after.endValue
        guard beforeSteady != afterSteady else { return halfway }
        let ramp = beforeSteady ? after : before, level = beforeSteady ? before.startValue : after.endValue
        let first = points[ramp.first].time, last = points[ramp.last].time
        guard last > first, ramp.endValue != ramp.startValue else { return halfway }
        let meeting = first + (level - ramp.startValue) * (last - first) / (ramp.endValue - ramp.startValue)
        return gap.contains(meeting) ? meeting : halfway
    }

    /// The series' noise: the robust spread (median absolute deviation about their median) of
    /// its differences over `lag` points (windows that share no audio), over the square root
    /// of two. Differences of overlapping windows would hide the noise (their errors are
    /// alike), and the median about which they spread takes out the steady part of a ramp.
    static func noise(_ values: [Double], lag: Int = 1) -> Double {
        let lag = max(lag, 1)
        guard values.count > lag + 1 else { return 0 }
        let differences = zip(values.dropFirst(lag), values).map { $0 - $1 }.sorted()
        let middle = differences[differences.count / 2]
        let deviations = differences.map { abs($0 - middle) }.sorted()
        return 1.4826 * deviations[deviations.count / 2] / 2.0.squareRoot()
    }

}
