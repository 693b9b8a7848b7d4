import CFFTW
import Foundation

/// FFTW's planner is not thread-safe; executing a finished plan is. Every plan is made and
/// destroyed under this lock.
let plannerLock = NSLock()

/// A real-input FFT of one fixed size, backed by FFTW (single precision).
///
/// Create it once per analysis and reuse it in the hot loop: the plans and the aligned buffers
/// are allocated at creation (aubio's create/process/destroy lifecycle). Not thread-safe: one
/// instance per thread.
public final class RealFFT {
    /// Number of real samples transformed.
    public let size: Int
    /// Number of complex bins of the spectrum: `size / 2 + 1`.
    public var binCount: Int { size / 2 + 1 }

    private let real: UnsafeMutablePointer<Float>
    private let complex: UnsafeMutablePointer<fftwf_complex>
    private let forwardPlan: fftwf_plan
    /// Made by the first ``inverse()``: a plan costs FFTW a millisecond or two to make, and
    /// transforms that only go forward (a spectrogram's frames) never need it.
    private var inversePlan: fftwf_plan?

    /// Prepares transforms of `size` real samples (any size; powers of two and small primes
    /// are fastest). The inverse transform is planned when first used.
    public init(size: Int) {
        precondition(size >= 2, "an FFT needs at least two samples")
        self.size = size
        let binCount = size / 2 + 1
        real = fftwf_alloc_real(size)
        complex = fftwf_alloc_complex(binCount)
        real.initialize(repeating: 0, count: size)
        complex.initialize(repeating: (0, 0), count: binCount)
        _ = FFTWisdom.loaded
        plannerLock.lock()
        forwardPlan = fftwf_plan_dft_r2c_1d(Int32(size), real, complex, UInt32(FFTW_ESTIMATE))
        plannerLock.unlock()
    }

    deinit {
        plannerLock.lock()
        fftwf_destroy_plan(forwardPlan)
        if let inversePlan { fftwf_destroy_plan(inversePlan) }
        plannerLock.unlock()
        fftwf_free(real)
        fftwf_free(complex)
    }

    /// The real buffer: fill it before ``forward()``; it holds the result after ``inverse()``.
    public var samples: UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: real, count: size)
    }

    /// The spectrum: `binCount` (re, im) pairs, valid after ``forward()``, input to ``inverse()``.
    public var spectrum: UnsafeMutableBufferPointer<fftwf_complex> {
        UnsafeMutableBufferPointer(start: complex, count: binCount)
    }

    /// Transforms ``samples`` into ``spectrum``. ``samples`` is left unchanged.
    public func forward() {
        fftwf_execute(forwardPlan)
    }

    /// Transforms ``spectrum`` back into ``samples``, unnormalised (scaled by `size`), as FFTW
    /// does. ``spectrum`` is overwritten.
    public func inverse() {
        if inversePlan == nil {
            _ = FFTWisdom.loaded
            plannerLock.lock()
            inversePlan = fftwf_plan_dft_c2r_1d(Int32(size), complex, real, UInt32(FFTW_ESTIMATE))
            plannerLock.unlock()
        }
        fftwf_execute(inversePlan)
    }

    /// Copies `input` into ``samples``, zero-padding (or truncating) to `size`.
    public func load(_ input: UnsafeBufferPointer<Float>) {
        let count = min(input.count, size)
        if count > 0, let base = input.baseAddress {
            real.update(from: base, count: count)
        }
        if count < size {
            (real + count).update(repeating: 0, count: size - count)
        }
    }

    /// The squared magnitude of each bin of ``spectrum``, written into `output` (at least
    /// `binCount` long).
    public func powerSpectrum(into output: UnsafeMutableBufferPointer<Float>) {
        precondition(output.count >= binCount)
        for bin in 0..<binCount {
            let (re, im) = complex[bin]
            output[bin] = re * re + im * im
        }
    }
}
