import Foundation

/// One analysis window of an ``OnsetStrengthEnvelope``, as a salience function sees it.
public struct EnvelopeWindow {
    /// The window's part of each band envelope (slices of the song's envelopes: indices are
    /// song frame numbers, from `startFrame` to `startFrame + frameCount`).
    public let bands: [ArraySlice<Float>]
    /// Envelope values per second.
    public let frameRate: Double
    /// Index of the window's first frame in the song's envelope.
    public let startFrame: Int
    public var frameCount: Int { bands.first?.count ?? 0 }

    public init(bands: [ArraySlice<Float>], frameRate: Double, startFrame: Int) {
        self.bands = bands
        self.frameRate = frameRate
        self.startFrame = startFrame
    }

    /// The lag, in (fractional) envelope frames, of one beat at `bpm`.
    public func lag(ofBPM bpm: Double) -> Double { 60 * frameRate / bpm }
}

/// What ``TempoVote`` needs to know: window layout, tempo range, tempo prior and thresholds.
public struct TempoVoteConfiguration: Sendable, Hashable {
    /// Length of each analysis window, in seconds (`window_s`).
    public var windowSeconds: Double
    /// Seconds between the starts of consecutive windows (`hop_s`).
    public var hopSeconds: Double
    public var minBPM: Double
    public var maxBPM: Double
    /// Centre of the log-normal tempo prior, in BPM: the tempo listeners tap most often.
    public var priorBPM: Double
    /// Width (standard deviation) of the prior, in octaves; 0 disables the prior.
    public var priorOctaves: Double
    /// Spacing of the tempo grid, in octaves (0.005 octave is about 0.35 % of tempo).
    public var gridOctaves: Double
    /// Windows whose mean squared sample is below this are silent (1e-16 is -160 dBFS: quiet
    /// recordings at -90 dBFS are still music).
    public var silenceMeanSquare: Double
    /// Below this salience a window, or the song, has no tempo.
    public var minimumSalience: Double

    public init(
        windowSeconds: Double = 8, hopSeconds: Double = 4, minBPM: Double = 60, maxBPM: Double = 200,
        priorBPM: Double = 110, priorOctaves: Double = 0.8, gridOctaves: Double = 0.005,
        silenceMeanSquare: Double = 1e-16, minimumSalience: Double = 0.03
    ) {
        self.windowSeconds = windowSeconds
        self.hopSeconds = hopSeconds
        self.minBPM = minBPM
        self.maxBPM = maxBPM
        self.priorBPM = priorBPM
        self.priorOctaves = priorOctaves
        self.gridOctaves = gridOctaves
        self.silenceMeanSquare = silenceMeanSquare
        self.minimumSalience = minimumSalience
    }
}

/// The windowed tempo vote the `default` presets share: a song's onset-strength envelope is cut
/// into overlapping windows, each window gets a tempo salience curve from the detector, and the
/// song tempo is decided from all windows together, so that intros, breaks and outros do not
/// decide the result (the multi-window analysis the source documents' future work asks for).
///
/// A detector plugs in only its **salience function**: given one ``EnvelopeWindow`` and the
/// tempo grid (BPM values, increasing, log-spaced over `minBPM...maxBPM`), it returns one value
/// per grid tempo saying how periodic the window is at that tempo, on a 0...1 scale
/// (1: perfectly periodic; 0 or below: nothing). For example, a comb filter's normalised output
/// energy, or a normalised autocorrelation at the beat lag:
///
/// ```swift
/// let vote = TempoVote(configuration: TempoVoteConfiguration(minBPM: 60, maxBPM: 200))
/// let autocorrelation = EnvelopeAutocorrelation()
/// let result = vote.decide(envelope) { window, bpms in
///     let r = autocorrelation.summed(window)          // sum over bands, lags 0..<frameCount
///     guard r[0] > 0 else { return bpms.map { _ in 0 } }
///     return bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / Double(r[0]) }
/// }
/// ```
///
/// The vote, per window: the energy (mean squared samples), the strength (the curve's maximum,
/// clamped to 0...1) and the window's tempo (the best prior-weighted grid tempo, refined by
/// parabolic interpolation; nil when the window is silent or weaker than `minimumSalience`).
/// For the song: every audible window votes with its whole curve weighted by its strength, so a
/// window whose strongest peak is at half the tempo still supports the tempo through its
/// secondary peak (octave-aware); the summed curve is weighted by a log-normal prior over tempo
/// (centre `priorBPM`, width `priorOctaves`), which decides between octave-related peaks of
/// similar support. The best tempo is refined by interpolation; the candidates are the best
/// peaks with the winner's octave relatives (x2, /2, x3, /3 within the range) always included,
/// strengths relative to the winner. The confidence is the square root of the mean, over
/// audible windows, of each window's strength times its salience at the song tempo (the
/// geometric mean of "how periodic" and "how much at this tempo"); below `minimumSalience`
/// the song has no tempo ("no periodicity").
public struct TempoVote: Sendable {
    /// A tempo and its strength relative to the best (1).
    public struct Candidate: Sendable, Hashable {
        public var bpm: Double
        public var strength: Double
    }

    /// The record of one window.
    public struct Window: Sendable, Hashable {
        public var startSeconds: Double
        public var durationSeconds: Double
        /// Mean of the squared samples of the window.
        public var energy: Double
        public var bpm: Double?
        /// The window's largest salience, in 0...1.
        public var strength: Double
    }

    /// The song's tempo as decided by the vote.
    public struct Result: Sendable, Hashable {
        public var bpm: Double?
        /// Why `bpm` is nil: "silence", "too short" or "no periodicity".
        public var reason: String?
        public var confidence: Double
        /// At most five, strongest first.
        public var candidates: [Candidate]
        public var windows: [Window]
    }

    /// A detector's salience function: one value per tempo of the grid (see ``TempoVote``).
    public typealias Salience = (_ window: EnvelopeWindow, _ bpms: [Double]) -> [Double]

    public let configuration: TempoVoteConfiguration
    /// The tempi evaluated, log-spaced over `minBPM...maxBPM`, both included.
    public let grid: [Double]
    private let prior: [Double]

    public init(configuration: TempoVoteConfiguration) {
        precondition(configuration.minBPM > 0 && configuration.minBPM < configuration.maxBPM)
        precondition(configuration.windowSeconds > 0 && configuration.hopSeconds > 0 && configuration.gridOctaves > 0)
        self.configuration = configuration
        let octaves = log2(configuration.maxBPM / configuration.minBPM)
        let steps = max(2, Int((octaves / configuration.gridOctaves).rounded(.up)))
        grid = (0...steps).map { configuration.minBPM * pow(2, octaves * Double($0) / Double(steps)) }
        prior = grid.map { bpm in
            guard configuration.priorOctaves > 0 else { return 1 }
            let distance = log2(bpm / configuration.priorBPM) / configuration.priorOctaves
            return exp(-0.5 * distance * distance)
        }
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

    /// Runs `salience` over every window of `envelope` and decides the song's tempo.
    public func decide(_ envelope: OnsetStrengthEnvelope, salience: Salience) -> Result {
        let minimumFrames = Int((2 * 60 / configuration.minBPM * envelope.frameRate).rounded(.up))
        guard envelope.frameCount > minimumFrames else {
            return Result(bpm: nil, reason: "too short", confidence: 0, candidates: [], windows: [])
        }
        var windows: [Window] = []
        var total = [Double](repeating: 0, count: grid.count)
        var audibleWindows = 0
        for range in windowRanges(frameCount: envelope.frameCount, frameRate: envelope.frameRate) {
            let startSample = envelope.frameStart(range.lowerBound)
            let endSample = range.upperBound >= envelope.frameCount ? envelope.sampleCount : envelope.frameStart(range.upperBound)
            var record = Window(
                startSeconds: Double(startSample) / envelope.sampleRate,
                durationSeconds: Double(endSample - startSample) / envelope.sampleRate,
                energy: envelope.meanSquare(frames: range), bpm: nil, strength: 0)
            if record.energy >= configuration.silenceMeanSquare {
                let window = EnvelopeWindow(
                    bands: envelope.bands.map { $0[range] }, frameRate: envelope.frameRate, startFrame: range.lowerBound)
                let curve = salience(window, grid).map { $0.isFinite ? $0 : 0 }
                precondition(curve.count == grid.count, "a salience function returns one value per grid tempo")
                let strength = min(max(curve.max() ?? 0, 0), 1)
                record.strength = strength
                if strength >= configuration.minimumSalience {
                    record.bpm = bestTempo(of: zip(curve, prior).map { $0 * $1 })?.bpm
                }
                for index in grid.indices { total[index] += strength * curve[index] }
                audibleWindows += 1
            }
            windows.append(record)
        }
        guard audibleWindows > 0 else {
            return Result(bpm: nil, reason: "silence", confidence: 0, candidates: [], windows: windows)
        }
        let support = total.map { $0 / Double(audibleWindows) }
        let score = zip(support, prior).map { $0 * $1 }
        guard let best = bestTempo(of: score) else {
            return Result(bpm: nil, reason: "no periodicity", confidence: 0, candidates: [], windows: windows)
        }
        let confidence = min(max(interpolated(support, at: best.position), 0), 1).squareRoot()
        guard confidence >= configuration.minimumSalience else {
            return Result(bpm: nil, reason: "no periodicity", confidence: confidence, candidates: [], windows: windows)
        }
        return Result(
            bpm: best.bpm, reason: nil, confidence: confidence,
            candidates: candidates(of: score, best: best), windows: windows)
    }

    // MARK: Peaks on the grid

    private struct GridPeak {
        var position: Double
        var bpm: Double
        var value: Double
    }

    /// The BPM at fractional grid position `position`.
    private func bpm(at position: Double) -> Double {
        let octaves = log2(grid.last! / grid.first!)
        return grid.first! * pow(2, octaves * position / Double(grid.count - 1))
    }

    private func interpolated(_ values: [Double], at position: Double) -> Double {
        let lower = min(max(Int(position.rounded(.down)), 0), values.count - 1)
        let upper = min(lower + 1, values.count - 1)
        let fraction = position - Double(lower)
        return values[lower] + (values[upper] - values[lower]) * fraction
    }

    /// Local maxima of `values` (ends included), refined by parabolic interpolation, strongest first.
    private func peaks(of values: [Double]) -> [GridPeak] {
        var found: [GridPeak] = []
        for index in values.indices {
            let left = index > 0 ? values[index - 1] : -Double.infinity
            let right = index + 1 < values.count ? values[index + 1] : -Double.infinity
            guard values[index] > left && values[index] >= right && values[index] > 0 else { continue }
            var position = Double(index)
            var value = values[index]
            if left.isFinite && right.isFinite {
                let vertex = Peaks.parabolicVertex(left: left, centre: values[index], right: right)
                position += vertex.offset
                value = vertex.value
            }
            found.append(GridPeak(position: position, bpm: bpm(at: position), value: value))
        }
        return found.sorted { $0.value > $1.value }
    }

    private func bestTempo(of values: [Double]) -> GridPeak? {
        peaks(of: values).first
    }

    private func candidates(of score: [Double], best: GridPeak) -> [Candidate] {
        let all = peaks(of: score)
        var chosen = [best]
        func isNew(_ bpm: Double) -> Bool {
            !chosen.contains { abs($0.bpm - bpm) <= 0.04 * bpm }
        }
        // The winner's octave relatives first: the strongest peak within 4 % of each multiple.
        for factor in [2.0, 0.5, 3.0, 1.0 / 3.0] {
            let target = best.bpm * factor
            guard target >= configuration.minBPM * 0.96, target <= configuration.maxBPM * 1.04 else { continue }
            if let peak = all.first(where: { abs($0.bpm - target) <= 0.04 * target }), isNew(peak.bpm) {
                chosen.append(peak)
            }
        }
        for peak in all where chosen.count < 5 && isNew(peak.bpm) {
            chosen.append(peak)
        }
        let top = max(best.value, .leastNonzeroMagnitude)
        return chosen.prefix(5)
            .map { Candidate(bpm: $0.bpm, strength: min(max($0.value / top, 0), 1)) }
            .sorted { $0.strength > $1.strength }
    }
}

/// Per-window autocorrelation of band envelopes through FFTW, for salience functions.
///
/// Keeps one ``FFTAutocorrelation`` and reuses it while the window length stays the same.
/// Not thread-safe: one per session.
public final class EnvelopeAutocorrelation {
    private var engine: FFTAutocorrelation?
    private var scratch: [Float] = []
    private var bandResult: [Float] = []

    public init() {}

    /// The sum over bands of each band's autocorrelation at lags `0..<window.frameCount`. With
    /// `removeMean` (the default) each band's mean is subtracted first, so the result measures
    /// periodicity rather than loudness. `weights` scales each band (all 1 when nil).
    public func summed(_ window: EnvelopeWindow, removeMean: Bool = true, weights: [Float]? = nil) -> [Float] {
        let length = window.frameCount
        guard length > 1 else { return [Float](repeating: 0, count: max(length, 1)) }
        if engine?.length != length {
            engine = FFTAutocorrelation(length: length, maxLag: length - 1)
            scratch = [Float](repeating: 0, count: length)
            bandResult = [Float](repeating: 0, count: length)
        }
        var total = [Float](repeating: 0, count: length)
        for (band, values) in window.bands.enumerated() {
            let weight = weights?[band] ?? 1
            guard weight != 0 else { continue }
            let mean = removeMean ? values.reduce(0, +) / Float(length) : 0
            for (index, value) in values.enumerated() { scratch[index] = value - mean }
            scratch.withUnsafeBufferPointer { input in
                bandResult.withUnsafeMutableBufferPointer { engine!.compute(input, into: $0) }
            }
            for lag in 0..<length { total[lag] += weight * bandResult[lag] }
        }
        return total
    }

    /// `values` at a fractional lag, by linear interpolation; 0 beyond the last lag.
    public static func value(_ values: [Float], atLag lag: Double) -> Double {
        guard lag >= 0 else { return 0 }
        let lower = Int(lag)
        guard lower + 1 < values.count else { return lower == values.count - 1 && lag == Double(lower) ? Double(values[lower]) : 0 }
        let fraction = lag - Double(lower)
        return Double(values[lower]) * (1 - fraction) + Double(values[lower + 1]) * fraction
    }
}
