import Foundation
import TactusDetector

/// How ``OnsetStrengthAccumulator`` turns audio into a band-wise onset-strength envelope.
///
/// Every length is in seconds or hertz, never in samples, so the envelope of the same music is
/// the same at 22.05, 44.1 or 48 kHz.
public struct OnsetStrengthConfiguration: Sendable, Hashable {
    /// Band edges in Hz, increasing: `n + 1` edges make `n` bands. Frequencies above the last
    /// edge (or the Nyquist frequency) are ignored.
    public var bandEdgesHz: [Double]
    /// Envelope values per second (the hop between analysis frames is `1 / frameRate` s).
    public var frameRate: Double
    /// Length of each analysis frame (a Hann-windowed FFT frame), in seconds.
    public var frameSeconds: Double
    /// Loudness compression: each band's magnitude m becomes log(1 + compression * m / M)
    /// before differencing, where M is the song's mean full-band magnitude, so soft and loud
    /// onsets count alike and the envelope's shape does not depend on the recording's gain.
    /// 0 keeps the energy linear ((m / M) squared).
    public var compression: Double
    /// Rises of the (compressed) level smaller than this are not onsets: with compression, 0.03
    /// ignores magnitude rises under about 3 %, the jitter of steady tones between frames.
    public var minimumRise: Double
    /// `true`: the envelope has one band, the mean of the bands' onset strengths (a spectral
    /// flux), computed without holding each band's envelope.
    public var averagesBands: Bool

    public init(
        bandEdgesHz: [Double], frameRate: Double = 100, frameSeconds: Double = 0.0232, compression: Double = 100,
        minimumRise: Double = 0.03, averagesBands: Bool = false
    ) {
        precondition(bandEdgesHz.count >= 2, "at least one band")
        precondition(frameRate > 0 && frameSeconds > 0 && compression >= 0 && minimumRise >= 0)
        self.bandEdgesHz = bandEdgesHz
        self.frameRate = frameRate
        self.frameSeconds = frameSeconds
        self.compression = compression
        self.minimumRise = minimumRise
        self.averagesBands = averagesBands
    }
}

/// A band-wise onset-strength (novelty) envelope at a low rate, with the signal energy needed
/// to report per-window energies.
///
/// `bands[b][k]` is the rectified increase of band `b`'s (compressed) magnitude from frame
/// `k - 1` to frame `k`: large where notes and drums start, zero where sound decays.
public struct OnsetStrengthEnvelope: Sendable {
    /// Envelope values per second.
    public let frameRate: Double
    /// The audio sample rate the envelope was computed from.
    public let sampleRate: Double
    /// One envelope per band, all of ``frameCount`` values.
    public let bands: [[Float]]
    /// Number of audio samples consumed.
    public let sampleCount: Int
    /// `energyPrefix[k]` is the sum of squared samples before the start of frame `k`
    /// (``frameStart(_:)``); the last entry covers every sample.
    private let energyPrefix: [Double]

    /// An envelope computed elsewhere (a detector's own beat-strength train, for example).
    /// `energyPrefix[k]` is the sum of squared samples before the start of frame `k` (so it
    /// starts with 0), and its last entry is the sum over every sample.
    public init(frameRate: Double, sampleRate: Double, bands: [[Float]], sampleCount: Int, energyPrefix: [Double]) {
        self.frameRate = frameRate
        self.sampleRate = sampleRate
        self.bands = bands
        self.sampleCount = sampleCount
        self.energyPrefix = energyPrefix
    }

    public var frameCount: Int { bands.first?.count ?? 0 }

    /// The same frames and energies with other band envelopes (each of ``frameCount``
    /// values): a detector's own signal derived from these bands, for example their sum.
    public func replacingBands(_ bands: [[Float]]) -> OnsetStrengthEnvelope {
        precondition(bands.allSatisfy { $0.count == frameCount })
        return OnsetStrengthEnvelope(
            frameRate: frameRate, sampleRate: sampleRate, bands: bands, sampleCount: sampleCount, energyPrefix: energyPrefix)
    }

    public var durationSeconds: Double { Double(sampleCount) / sampleRate }

    /// The first audio sample of frame `k` (frames start `sampleRate / frameRate` samples apart,
    /// rounded, so the rate is exact on average).
    public func frameStart(_ frame: Int) -> Int {
        min(Int((Double(frame) * sampleRate / frameRate).rounded()), sampleCount)
    }

    /// Mean of the squared samples from the start of frame `frames.lowerBound` to the start of
    /// frame `frames.upperBound` (or the end of the signal).
    public func meanSquare(frames: Range<Int>) -> Double {
        let end = energyPrefix.count - 1
        let first = min(max(frames.lowerBound, 0), end)
        let last = min(max(frames.upperBound, first), end)
        func position(_ entry: Int) -> Int { entry == end ? sampleCount : frameStart(entry) }
        let samples = position(last) - position(first)
        guard samples > 0 else { return 0 }
        return max(energyPrefix[last] - energyPrefix[first], 0) / Double(samples)
    }
}

/// Computes an ``OnsetStrengthEnvelope`` while the song streams in.
///
/// Each frame of ``OnsetStrengthConfiguration/frameSeconds`` is Hann-windowed and transformed
/// with FFTW (``SpectralFrames``, which accumulators of the same frames share); the power in
/// each band is summed and normalised by the frame and FFT lengths (so it does not depend on
/// the sample rate). At the end of the song each band's magnitude is compressed relative to
/// the song's mean magnitude and differenced against the previous frame with negative changes
/// dropped (Scheirer's diff-rect, on spectral bands). Memory is bounded by one frame of audio
/// plus the low-rate envelope.
public final class OnsetStrengthAccumulator {
    public let configuration: OnsetStrengthConfiguration
    public let sampleRate: Double

    /// The frames' spectra, this accumulator's own or shared with others.
    private let frames: SpectralFrames
    /// Bin ranges of the bands (empty when the band is above the Nyquist frequency).
    private let bandBins: [Range<Int>]
    private let powerScale: Float
    /// The frames' band powers, four frames at a time.
    private let bandPowers: BandPowers

    /// Samples consumed so far.
    private var consumed = 0
    /// Each band's magnitude (square root of its normalised power), one value per frame.
    /// Frame after frame (frame-major): `magnitudes[frame * bandCount + band]`, one append per
    /// frame rather than one per band.
    private var magnitudes: [Float] = []
    /// The sum of ``magnitudes`` in their order, added up as the frames come (the mean the
    /// compression is relative to).
    private var magnitudeTotal = 0.0

    /// An accumulator with its own frames; with `frontEnds`, with the frames of any other
    /// accumulator of the song with the same rate, frame rate and frame length. Given the
    /// number of samples to expect (``TactusDetector/SignalFormat/expectedFrames``), it holds
    /// room for their frames from the start instead of growing (and copying) as they come.
    public init(
        sampleRate: Double, configuration: OnsetStrengthConfiguration, frontEnds: SharedFrontEnds? = nil,
        expectedSamples: Int? = nil
    ) {
        precondition(sampleRate > 0)
        self.sampleRate = sampleRate
        self.configuration = configuration
        let key = SpectralFrames.Key(sampleRate: sampleRate, frameRate: configuration.frameRate, frameSeconds: configuration.frameSeconds)
        frames = frontEnds?.shared(key) { SpectralFrames(key: key) } ?? SpectralFrames(key: key)
        let fftSize = frames.fftSize
        let binHz = sampleRate / Double(fftSize)
        let binCount = fftSize / 2 + 1
        bandBins = zip(configuration.bandEdgesHz, configuration.bandEdgesHz.dropFirst()).map { low, high in
            let first = min(Int((low / binHz).rounded(.up)), binCount)
            let last = min(Int((high / binHz).rounded(.up)), binCount)
            return first..<max(first, last)
        }
        // Parseval: the windowed frame's power sums to about fftSize * frameLength * meanSquare * 3/16
        // over the half spectrum; dividing by fftSize * frameLength makes it rate-independent.
        powerScale = 1 / (Float(fftSize) * Float(frames.frameLength))
        bandPowers = BandPowers(bands: bandBins.map { (2 * $0.lowerBound)..<(2 * $0.upperBound) })
        if let expectedSamples, expectedSamples > 0 {
            // At most 2^18 frames (43 minutes at 100 per second) held in advance, whatever a
            // header claims: a longer song grows as it comes.
            let frameCount = min(Int(Double(expectedSamples) / sampleRate * configuration.frameRate) + 2, 1 << 18)
            magnitudes.reserveCapacity(frameCount * bandBins.count)
        }
        // Weak: the shared frames may outlive this accumulator.
        frames.listen { [weak self] spectrum in self?.appendFrame(spectrum) }
    }

    /// The envelope of a whole signal held in memory, fed in blocks of `blockSize` samples.
    public static func envelope(
        of signal: [Float], sampleRate: Double, configuration: OnsetStrengthConfiguration, blockSize: Int = 4096
    ) -> OnsetStrengthEnvelope {
        let accumulator = OnsetStrengthAccumulator(
            sampleRate: sampleRate, configuration: configuration, expectedSamples: signal.count)
        signal.forEachBlock(of: blockSize) { accumulator.consume($0) }
        return accumulator.finish()
    }

    /// Takes the next samples (any length).
    public func consume(_ samples: UnsafeBufferPointer<Float>) {
        frames.consume(samples, at: consumed)
        consumed += samples.count
    }

    /// Ends the signal and returns the envelope: one frame per hop started before the end (the
    /// last frames are zero-padded), so the envelope covers the whole signal.
    public func finish() -> OnsetStrengthEnvelope {
        frames.finish()
        appendBandPowers()
        return OnsetStrengthEnvelope(
            frameRate: configuration.frameRate, sampleRate: sampleRate, bands: onsetStrength(),
            sampleCount: consumed, energyPrefix: frames.energyPrefix)
    }

    /// Compression relative to the song's mean full-band magnitude, then diff-rect per band.
    ///
    /// The levels are computed in place first (no running sum waits on `logf`), then the rises:
    /// the band-averaged flux sums four frames at a time, each frame's bands in order.
    private func onsetStrength() -> [[Float]] {
        let bandCount = bandBins.count
        let frames = bandCount > 0 ? magnitudes.count / bandCount : 0
        guard frames > 0 else { return Array(repeating: [], count: bandCount) }
        let reference = magnitudeTotal / Double(frames)
        let relative = reference > 0 ? Float(1 / reference) : 0
        let minimumRise = Float(configuration.minimumRise)
        var bands: [[Float]] = []
        magnitudes.withUnsafeMutableBufferPointer { levels in
            Self.compress(levels, relative: relative, compression: configuration.compression)
            let levels = UnsafeBufferPointer(levels)
            if configuration.averagesBands {
                bands = [[Float](unsafeUninitializedCapacity: frames) { values, initialised in
                    Self.averageRises(levels, bandCount: bandCount, minimumRise: minimumRise, into: values)
                    initialised = frames
                }]
                return
            }
            for band in 0..<bandCount {
                bands.append([Float](unsafeUninitializedCapacity: frames) { values, initialised in
                    values[0] = 0
                    var previous = levels[band]
                    for frame in 1..<frames {
                        let current = levels[frame * bandCount + band]
                        values[frame] = max(current - previous - minimumRise, 0)
                        previous = current
                    }
                    initialised = frames
                })
            }
        }
        magnitudes = []
        return bands
    }

    /// Each magnitude m becomes its level: log(1 + compression * m * relative), or
    /// (m * relative) squared without compression. (`logf(1 + x)`: three times faster than
    /// `log1pf`, the same to 1e-7 here.)
    private static func compress(_ magnitudes: UnsafeMutableBufferPointer<Float>, relative: Float, compression: Double) {
        if compression == 0 {
            for index in magnitudes.indices {
                let scaled = magnitudes[index] * relative
                magnitudes[index] = scaled * scaled
            }
        } else {
            let compression = Float(compression)
            for index in magnitudes.indices where magnitudes[index] != 0 {
                // A zero magnitude (a band between two bins, digital silence) keeps its level
                // of log(1) = 0 without a call.
                magnitudes[index] = logf(1 + compression * (magnitudes[index] * relative))
            }
        }
    }

    /// The mean over the bands of each frame's rectified rise of `levels` (frame-major,
    /// `bandCount` per frame) less `minimumRise`, 0 for the first frame. Each frame's bands are
    /// summed in order; four frames at a time, so that four sums advance together.
    private static func averageRises(
        _ levels: UnsafeBufferPointer<Float>, bandCount: Int, minimumRise: Float, into values: UnsafeMutableBufferPointer<Float>
    ) {
        let frames = values.count
        let scale = 1 / Float(bandCount)
        func rise(_ frame: Int, _ band: Int) -> Float {
            max(levels[frame * bandCount + band] - levels[(frame - 1) * bandCount + band] - minimumRise, 0)
        }
        values[0] = 0
        var frame = 1
        while frame + 4 <= frames {
            var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
            for band in 0..<bandCount {
                sums.0 += rise(frame, band)
                sums.1 += rise(frame + 1, band)
                sums.2 += rise(frame + 2, band)
                sums.3 += rise(frame + 3, band)
            }
            values[frame] = sums.0 * scale
            values[frame + 1] = sums.1 * scale
            values[frame + 2] = sums.2 * scale
            values[frame + 3] = sums.3 * scale
            frame += 4
        }
        while frame < frames {
            var sum: Float = 0
            for band in 0..<bandCount { sum += rise(frame, band) }
            values[frame] = sum * scale
            frame += 1
        }
    }

    /// Takes one frame's spectrum (interleaved (re, im) pairs: a band's power is the sum of
    /// the squares of its floats); its band magnitudes are appended with those of the next
    /// three.
    private func appendFrame(_ spectrum: UnsafeBufferPointer<Float>) {
        if bandPowers.add(spectrum) { appendBandPowers() }
    }

    /// Appends the magnitudes of the frames whose spectra ``bandPowers`` holds, and adds them
    /// to their running total in order.
    private func appendBandPowers() {
        let powerScale = self.powerScale
        bandPowers.flush { powers in
            let start = magnitudes.count
            magnitudes.append(contentsOf: repeatElement(0, count: powers.count))
            // A local running total: one captured by the closure would live in memory, each
            // addition waiting on the store of the last.
            var total = magnitudeTotal
            magnitudes.withUnsafeMutableBufferPointer { all in
                for index in powers.indices {
                    let magnitude = (powers[index] * powerScale).squareRoot()
                    all[start + index] = magnitude
                    total += Double(magnitude)
                }
            }
            magnitudeTotal = total
        }
    }
}
