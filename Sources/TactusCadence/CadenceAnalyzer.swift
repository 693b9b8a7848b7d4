import Foundation
import TactusDSP
import TactusModel

/// The cadence (steps per minute) of an accelerometer recording, over time and overall.
///
/// The method of seed 000 ("Music Runner", after R. Moe-Nilssen and J. L. Helbostad, "Estimation
/// of gait cycle characteristics by trunk accelerometry", J. Biomech. 37(1), 2004), made
/// independent of the phone's orientation and of its sampling:
/// 1. The three axes are resampled at ``Settings/analysisRate`` (see ``Sampling/resample(times:values:rate:cutoff:)``).
/// 2. With gravity in the recording, the analysed signal is the magnitude of the three axes: it does not
///    depend on the orientation, and it mostly sees the vertical acceleration, where the steps are
///    (horizontal arm swing enters only at second order). Without gravity (linear acceleration), the
///    three axes are analysed together: the sum of their autocorrelations is that of the vector, which
///    does not depend on a fixed orientation either.
/// 3. In each window (10 s every 2 s), the mean is removed (gravity, sensor offsets); a window whose
///    standard deviation is below ``Settings/stillThreshold`` is `still`.
/// 4. The unbiased, normalised autocorrelation (through the FFT) is searched for the step period in
///    the lags of 90-210 steps/min. The strongest peak may be the stride (two steps, when the left and
///    right steps differ or the arms swing at half the step rate): when half its lag is a peak too,
///    with at least half its prominence, the half lag is the step.
/// 5. The period is refined below one sample: parabolic interpolation of the peaks at one, two, three...
///    periods, and a least-squares fit of the period through them.
/// 6. A window whose autocorrelation at the step (or stride) period is below
///    ``Settings/minimumPeriodicity`` is `irregular`. The overall cadence is the mean over the windows
///    with steps.
public struct CadenceAnalyzer: Sendable {
    /// How recordings are analysed.
    public struct Settings: Sendable, Hashable {
        /// Seconds per analysis window.
        public var window: Double = 10
        /// Seconds between the starts of consecutive windows.
        public var hop: Double = 2
        /// The cadences searched, in steps per minute (walking and running).
        public var cadenceRange: ClosedRange<Double> = 90...210
        /// The rate of the analysis grid, in Hz.
        public var analysisRate: Double = 100
        /// The low-pass cutoff before resampling, in Hz (steps have little energy above it).
        public var cutoff: Double = 12
        /// A window whose signal has a smaller standard deviation, in g, is `still` (when the unit is
        /// only assumed, the threshold is read in either unit: the lower).
        public var stillThreshold: Double = 0.04
        /// A window whose autocorrelation at the period is smaller is `irregular`.
        public var minimumPeriodicity: Double = 0.3
        /// The most windows a report lists: past them (a recording of over 8 hours at a hop of
        /// 2 s) the hop grows by whole multiples of ``hop`` (``hop(over:)``), so that the report of
        /// a recording as long as ``RecordingReader/maximumSeconds`` stays within what a server's
        /// reply may carry (a 20-hour workout's 36,000 windows took 4.9 MB: attack round 8, M4).
        public var maximumWindows = 14_400

        public init() {}

        /// The seconds between the starts of windows over a recording of `duration` seconds:
        /// ``hop``, or the least multiple of it that keeps to ``maximumWindows``.
        public func hop(over duration: Double) -> Double {
            let windows = ((duration - window) / hop).rounded(.down) + 1
            guard windows > Double(maximumWindows) else { return hop }
            return hop * (windows / Double(maximumWindows)).rounded(.up)
        }
    }

    public var settings: Settings

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Reads and analyses the recording or the watch's workout at `path`.
    public func analyze(path: String) throws(CadenceError) -> CadenceReport {
        try analyze(RecordingReader.contents(path: path), file: path)
    }

    /// Analyses the recording or the watch's workout (GPX, TCX, FIT: ``WorkoutReader``) in
    /// `bytes`, read from `file` (named in the report and in errors).
    public func analyze(_ bytes: [UInt8], file: String) throws(CadenceError) -> CadenceReport {
        if let format = WorkoutReader.format(of: bytes) {
            return try WorkoutAnalyzer(settings: settings).analyze(WorkoutReader.read(bytes, format: format, file: file), file: file)
        }
        return try analyze(RecordingReader.read(bytes, file: file), file: file)
    }

    /// Analyses `recording`, read from `file` (named in the report and in errors).
    public func analyze(_ recording: AccelerometerRecording, file: String) throws(CadenceError) -> CadenceReport {
        guard recording.count >= RecordingReader.minimumSamples, recording.duration >= settings.window else {
            throw CadenceError(
                file: file, .tooFewSamples(count: recording.count, seconds: recording.duration, minimumSeconds: settings.window))
        }
        let rate = settings.analysisRate
        let axes = [recording.x, recording.y, recording.z].map {
            Sampling.resample(times: recording.times, values: $0, rate: rate, cutoff: settings.cutoff)
        }
        let gravity = Gravity(axes: axes, declaredUnit: recording.declaredUnit, windowLength: Int(settings.window * rate))
        let scale = gravity.unit.inStandardGravity
        let channels: [[Float]]
        if gravity.present {
            let (x, y, z) = (axes[0], axes[1], axes[2])
            var magnitude = [Float](repeating: 0, count: x.count)
            for index in x.indices {
                let squares: Double = x[index] * x[index] + y[index] * y[index] + z[index] * z[index]
                magnitude[index] = Float(squares.squareRoot() * scale)
            }
            channels = [magnitude]
        } else {
            channels = axes.map { axis in axis.map { Float($0 * scale) } }
        }
        // A unit only assumed may be g read as m/s^2, which would make walking look still: then the
        // threshold holds in either unit (the lower of the two readings).
        let stillThreshold = gravity.evidence == .assumed ? settings.stillThreshold * scale : settings.stillThreshold
        let hop = settings.hop(over: recording.duration)
        let windows = analyzeWindows(channels, stillThreshold: stillThreshold, hop: hop)
        let stepping = windows.compactMap(\.cadence)
        return CadenceReport(
            file: file, format: recording.format, unit: gravity.unit, unitEvidence: gravity.evidence,
            includesGravity: gravity.present, samples: recording.count, duration: recording.duration,
            sampleRate: 1 / Sampling.medianInterval(recording.times),
            cadence: stepping.isEmpty ? nil : stepping.reduce(0, +) / Double(stepping.count),
            stepSeconds: Double(stepping.count) * hop, windows: windows)
    }

    /// Every window of `channels` (same length, in g, at the analysis rate), one every `hop`
    /// seconds; those moving less than `stillThreshold` (g) are still.
    func analyzeWindows(_ channels: [[Float]], stillThreshold: Double, hop seconds: Double) -> [CadenceWindow] {
        let rate = settings.analysisRate
        let length = Int((settings.window * rate).rounded())
        let hop = max(1, Int((seconds * rate).rounded()))
        let shortestLag = rate * 60 / settings.cadenceRange.upperBound
        let longestLag = rate * 60 / settings.cadenceRange.lowerBound
        // Lags up to three step periods at the slowest cadence, for the stride and the refinement.
        let maxLag = min(length / 2, Int((3 * longestLag).rounded(.up)) + 2)
        let autocorrelation = FFTAutocorrelation(length: length, maxLag: maxLag)
        var segment = [Float](repeating: 0, count: length)
        var channelSum = [Float](repeating: 0, count: maxLag + 1)
        var total = [Double](repeating: 0, count: maxLag + 1)
        var windows: [CadenceWindow] = []
        var start = 0
        while start + length <= channels[0].count {
            total.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            for channel in channels {
                var mean = 0.0
                for index in 0..<length { mean += Double(channel[start + index]) }
                mean /= Double(length)
                for index in 0..<length { segment[index] = channel[start + index] - Float(mean) }
                segment.withUnsafeBufferPointer { input in
                    channelSum.withUnsafeMutableBufferPointer { autocorrelation.compute(input, into: $0) }
                }
                for lag in 0...maxLag { total[lag] += Double(channelSum[lag]) }
            }
            let movement = (max(total[0], 0) / Double(length)).squareRoot()
            let startTime = Double(start) / rate
            var window = CadenceWindow(
                start: startTime, end: startTime + Double(length) / rate, status: .still, cadence: nil, confidence: 0,
                movement: movement)
            if movement >= stillThreshold {
                // Unbiased (each lag divided by its number of products) and normalised (1 at lag 0).
                var normalised = [Double](repeating: 0, count: maxLag + 1)
                for lag in 0...maxLag {
                    normalised[lag] = total[lag] / total[0] * Double(length) / Double(length - lag)
                }
                let period = StepPeriod(normalised, shortestLag: shortestLag, longestLag: longestLag)
                window.confidence = period.map { min(max($0.periodicity, 0), 1) } ?? 0
                if let period, period.periodicity >= settings.minimumPeriodicity {
                    window.status = .steps
                    window.cadence = 60 * rate / period.lag
                } else {
                    window.status = .irregular
                }
            }
            windows.append(window)
            start += hop
        }
        return windows
    }
}

/// Whether a recording includes gravity, and its unit.
///
/// Gravity is a vector of constant length that turns only as the phone turns: over a window of
/// several seconds, the mean of the three axes is close to it (1 g long), while the mean of a linear
/// acceleration is close to zero. The median length of the windows' mean vectors tells both whether
/// gravity is there and, when the header does not say, the unit (about 9.8: m/s^2; about 1: g).
struct Gravity {
    var present: Bool
    var unit: AccelerationUnit
    var evidence: UnitEvidence

    init(axes: [[Double]], declaredUnit: AccelerationUnit?, windowLength: Int) {
        var lengths: [Double] = []
        var start = 0
        let count = axes[0].count
        let step = max(1, min(windowLength, count))
        while start + step <= count {
            let means = axes.map { axis in axis[start..<(start + step)].reduce(0, +) / Double(step) }
            lengths.append((means[0] * means[0] + means[1] * means[1] + means[2] * means[2]).squareRoot())
            start += step
        }
        lengths.sort()
        let typical = lengths.isEmpty ? 0 : lengths[lengths.count / 2]
        let nearOneG: (Double) -> Bool = { (0.6...1.4).contains($0) }
        if let declaredUnit {
            unit = declaredUnit
            evidence = .header
            present = nearOneG(typical * declaredUnit.inStandardGravity)
        } else if nearOneG(typical) {
            (unit, evidence, present) = (.standardGravity, .gravity, true)
        } else if nearOneG(typical * AccelerationUnit.metresPerSecondSquared.inStandardGravity) {
            (unit, evidence, present) = (.metresPerSecondSquared, .gravity, true)
        } else {
            (unit, evidence, present) = (.metresPerSecondSquared, .assumed, false)
        }
    }
}

/// The step period found in a window's normalised autocorrelation, in lags (fractional).
struct StepPeriod {
    /// The refined period, in samples.
    var lag: Double
    /// The autocorrelation at the step period or at the stride period (twice), the larger.
    var periodicity: Double

    /// The step period of `r` (normalised autocorrelation, lag 0 to r.count - 1) between
    /// `shortestLag` and `longestLag`; nil when there is no peak there.
    init?(_ r: [Double], shortestLag: Double, longestLag: Double) {
        let peaks = Self.peaks(r, from: Int(shortestLag.rounded(.down)) - 1, to: Int(longestLag.rounded(.up)) + 1)
            .filter { $0.position >= shortestLag * 0.98 && $0.position <= longestLag * 1.02 }
        guard var step = peaks.max(by: { $0.value < $1.value }) else { return nil }
        // Stride or step? When half the strongest lag is a peak of comparable prominence, that is the step.
        let half = step.position / 2
        if half >= shortestLag * 0.98,
            let candidate = Self.peaks(r, from: Int(half * 0.85), to: Int((half * 1.15).rounded(.up)))
                .max(by: { $0.value < $1.value }),
            candidate.value > 0,
            Self.prominence(r, candidate) >= 0.5 * Self.prominence(r, step)
        {
            step = candidate
        }
        // The period through the peaks at its multiples (least squares through the origin).
        var weighted = 0.0, squares = 0.0
        var strideValue = -Double.infinity
        for multiple in 1...max(1, Int(Double(r.count - 2) / step.position)) {
            let expected = step.position * Double(multiple)
            let reach = max(2, 0.1 * step.position)
            let near = Self.peaks(r, from: Int(expected - reach), to: Int((expected + reach).rounded(.up)))
                .min(by: { abs($0.position - expected) < abs($1.position - expected) })
            guard let near else { continue }
            weighted += Double(multiple) * near.position
            squares += Double(multiple * multiple)
            if multiple == 2 { strideValue = near.value }
        }
        lag = weighted / squares
        periodicity = max(step.value, strideValue)
    }

    /// The local maxima of `r` between the lags `from` and `to` (clamped), refined by parabolic interpolation.
    static func peaks(_ r: [Double], from: Int, to: Int) -> [LagPeak] {
        let lower = max(from, 1), upper = min(to, r.count - 2)
        guard lower <= upper else { return [] }
        var found: [LagPeak] = []
        for index in lower...upper where r[index] > r[index - 1] && r[index] >= r[index + 1] {
            let vertex = Peaks.parabolicVertex(left: r[index - 1], centre: r[index], right: r[index + 1])
            found.append(LagPeak(index: index, position: Double(index) + vertex.offset, value: vertex.value))
        }
        return found
    }

    /// How far `peak` rises above the higher of the lowest points within half its lag on each side.
    static func prominence(_ r: [Double], _ peak: LagPeak) -> Double {
        let reach = max(1, Int(peak.position / 2))
        let left = r[max(0, peak.index - reach)...peak.index].min() ?? peak.value
        let right = r[peak.index...min(r.count - 1, peak.index + reach)].min() ?? peak.value
        return peak.value - max(left, right)
    }
}

/// A local maximum of an autocorrelation: its lag, the lag refined below one sample, and the height there.
struct LagPeak {
    var index: Int
    var position: Double
    var value: Double
}
