import Foundation

/// The autocorrelation of a signal up to a maximum lag, computed through the FFT
/// (the spectrum times its conjugate, transformed back), as seed 000 section 4.7 does.
///
/// Linear, not circular: the signal is zero-padded to at least `length + maxLag` samples, to
/// a power of two (``FFTSize/powerOfTwo(atLeast:)``). Reuses one ``RealFFT``; create it once
/// per signal length.
///
/// With a `spectralExponent` other than 2 it is the *generalised* autocorrelation
/// (Tomic & Janer; Percival & Tzanetakis 2014): the inverse transform of |X|^k rather than
/// |X|^2. k = 0.5 sharpens the peaks and keeps loud periodic parts from masking soft ones.
public final class FFTAutocorrelation {
    /// The longest signal accepted.
    public let length: Int
    /// The largest lag computed.
    public let maxLag: Int
    /// k in |X|^k: 2 is the ordinary autocorrelation.
    public let spectralExponent: Float
    private let fft: RealFFT
    /// The length of the transforms (the zero-padded signal).
    public var fftSize: Int { fft.size }

    public init(length: Int, maxLag: Int, spectralExponent: Float = 2) {
        precondition(length > 0 && maxLag >= 0 && spectralExponent > 0)
        self.length = length
        self.maxLag = min(maxLag, length - 1)
        self.spectralExponent = spectralExponent
        fft = RealFFT(size: FFTSize.powerOfTwo(atLeast: length + self.maxLag + 1))
    }

    /// R[k] = sum over n of x[n] x[n + k], for k = 0...maxLag, written to `output`
    /// (at least `maxLag + 1` long). `signal` may be shorter than `length`.
    public func compute(_ signal: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(signal.count <= length && output.count > maxLag)
        fft.load(signal)
        fft.forward()
        let spectrum = fft.spectrum
        if spectralExponent == 2 {
            for bin in spectrum.indices {
                let (re, im) = spectrum[bin]
                spectrum[bin] = (re * re + im * im, 0)
            }
        } else {
            let half = spectralExponent / 2
            for bin in spectrum.indices {
                let (re, im) = spectrum[bin]
                spectrum[bin] = (powf(re * re + im * im, half), 0)
            }
        }
        fft.inverse()
        let scale = 1 / Float(fft.size)
        for lag in 0...maxLag {
            output[lag] = fft.samples[lag] * scale
        }
    }

    /// Convenience returning a new array of `maxLag + 1` values.
    public func compute(_ signal: [Float]) -> [Float] {
        var output = [Float](repeating: 0, count: maxLag + 1)
        signal.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { compute(input, into: $0) }
        }
        return output
    }
}

/// FFT sizes that FFTW transforms quickly.
public enum FFTSize {
    /// The smallest even size >= `minimum` whose prime factors are 2, 3 and 5 only. Even,
    /// because FFTW's real transforms of odd sizes are several times slower: a 23.2 ms frame
    /// at 48 kHz (1,114 samples) takes 1,152 points (1.1 us), not 1,125 (5 us).
    public static func atLeast(_ minimum: Int) -> Int {
        var candidate = max(minimum, 2)
        candidate += candidate % 2
        while true {
            var rest = candidate
            for prime in [2, 3, 5] {
                while rest % prime == 0 { rest /= prime }
            }
            if rest == 1 { return candidate }
            candidate += 2
        }
    }

    /// The smallest power of two >= `minimum` (at least 2). For transforms planned once per
    /// song and run a few hundred times, such as the autocorrelation of envelope windows:
    /// FFTW takes 1.5 to 2.5 ms to plan a transform of a new 2·3·5 size like 2,400 or 4,320,
    /// even estimating, and under 1 ms for a power of two, and a song's detectors, whose
    /// windows differ in length, then share fewer sizes (FFTW reuses what it planned before).
    public static func powerOfTwo(atLeast minimum: Int) -> Int {
        var size = 2
        while size < minimum { size *= 2 }
        return size
    }
}
