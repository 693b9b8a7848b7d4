import CFFTW

/// An in-place complex FFT of one fixed size, backed by FFTW (single precision), for
/// transforms a real FFT does not cover (Bluestein's algorithm for sizes with large prime
/// factors, two real signals in one transform).
///
/// The plans and the aligned buffer are made once; not thread-safe: one instance per thread.
public final class ComplexFFT {
    public let size: Int
    private let buffer: UnsafeMutablePointer<fftwf_complex>
    private let forwardPlan: fftwf_plan
    private let backwardPlan: fftwf_plan

    /// Prepares transforms of `size` complex values (sizes whose prime factors are 2, 3 and
    /// 5 are fastest: ``FFTSize/atLeast(_:)``).
    public init(size: Int) {
        precondition(size >= 2, "an FFT needs at least two values")
        self.size = size
        buffer = fftwf_alloc_complex(size)
        buffer.initialize(repeating: (0, 0), count: size)
        _ = FFTWisdom.loaded
        plannerLock.lock()
        forwardPlan = fftwf_plan_dft_1d(Int32(size), buffer, buffer, FFTW_FORWARD, UInt32(FFTW_ESTIMATE))
        backwardPlan = fftwf_plan_dft_1d(Int32(size), buffer, buffer, FFTW_BACKWARD, UInt32(FFTW_ESTIMATE))
        plannerLock.unlock()
    }

    deinit {
        plannerLock.lock()
        fftwf_destroy_plan(forwardPlan)
        fftwf_destroy_plan(backwardPlan)
        plannerLock.unlock()
        fftwf_free(buffer)
    }

    /// The values, interleaved (re, im): `2 * size` floats, transformed in place.
    public var values: UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: Float.self)
    }

    /// X[k] = sum x[n] e^(-2 pi i n k / size), in place.
    public func forward() { fftwf_execute(forwardPlan) }

    /// x[n] = sum X[k] e^(+2 pi i n k / size), in place, unnormalised (scaled by `size`).
    public func backward() { fftwf_execute(backwardPlan) }
}
