import CFFTW

/// A complex FFT of one fixed size, in place or out of place, backed by FFTW (single precision), for
/// transforms a real FFT does not cover (Bluestein's algorithm for sizes with large prime
/// factors, two real signals in one transform).
///
/// The plans and the aligned buffers are made once; not thread-safe: one instance per thread.
///
/// In place (the default) the transforms read and write ``values``. Out of place, the forward
/// transform reads ``values`` and writes ``spectrum``, a second buffer, and the backward one
/// goes back: for some sizes FFTW's in-place plan passes the data through a scratch buffer
/// that the out-of-place plan, with the same codelets, does without (2880 points: 3.6 µs
/// instead of 4.1).
public final class ComplexFFT {
    public let size: Int
    private let buffer: UnsafeMutablePointer<fftwf_complex>
    /// What ``forward()`` writes and ``backward()`` reads: ``buffer`` itself in place.
    private let transformed: UnsafeMutablePointer<fftwf_complex>
    private let forwardPlan: fftwf_plan
    private let backwardPlan: fftwf_plan

    /// Prepares transforms of `size` complex values (sizes whose prime factors are 2, 3 and
    /// 5 are fastest: ``FFTSize/atLeast(_:)``), in place or out of place.
    public init(size: Int, outOfPlace: Bool = false) {
        precondition(size >= 2, "an FFT needs at least two values")
        self.size = size
        buffer = fftwf_alloc_complex(size)
        buffer.initialize(repeating: (0, 0), count: size)
        if outOfPlace {
            transformed = fftwf_alloc_complex(size)
            transformed.initialize(repeating: (0, 0), count: size)
        } else {
            transformed = buffer
        }
        _ = FFTWisdom.loaded
        plannerLock.lock()
        forwardPlan = fftwf_plan_dft_1d(Int32(size), buffer, transformed, FFTW_FORWARD, UInt32(FFTW_ESTIMATE))
        backwardPlan = fftwf_plan_dft_1d(Int32(size), transformed, buffer, FFTW_BACKWARD, UInt32(FFTW_ESTIMATE))
        plannerLock.unlock()
    }

    deinit {
        plannerLock.lock()
        fftwf_destroy_plan(forwardPlan)
        fftwf_destroy_plan(backwardPlan)
        plannerLock.unlock()
        if transformed != buffer { fftwf_free(transformed) }
        fftwf_free(buffer)
    }

    /// The values, interleaved (re, im): `2 * size` floats, what ``forward()`` transforms and
    /// where ``backward()`` writes.
    public var values: UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: Float.self)
    }

    /// Where ``forward()`` writes and what ``backward()`` transforms, interleaved (re, im):
    /// ``values`` itself in place.
    public var spectrum: UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer(transformed).assumingMemoryBound(to: Float.self)
    }

    /// X[k] = sum x[n] e^(-2 pi i n k / size), from ``values`` into ``spectrum``.
    public func forward() { fftwf_execute(forwardPlan) }

    /// x[n] = sum X[k] e^(+2 pi i n k / size), from ``spectrum`` into ``values``, unnormalised
    /// (scaled by `size`).
    public func backward() { fftwf_execute(backwardPlan) }
}
