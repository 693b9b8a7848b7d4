import Foundation
import TactusDSP

/// The magnitude spectra of two real frames of any length `N` at once: one complex DFT of
/// `first + i * second`, computed with Bluestein's algorithm over a fast FFT.
///
/// BeatNet's frames are 1411 samples (17 x 83): FFTW has no fast algorithm for those
/// factors and spends about 35 us on one real transform. Bluestein's identity
/// nk = (n^2 + k^2 - (k - n)^2) / 2 turns the N-point DFT into a circular convolution with the
/// chirp w[n] = e^(-i pi n^2 / N), done with ``ComplexFFT``s of size M >= 2N - 1 whose prime
/// factors are 2, 3 and 5 (2880 for 1411): X[k] = w[k] * sum_n (x[n] w[n]) conj(w[k - n]).
/// Two real frames share the transform (Z = X + iY, so X[k] = (Z[k] + conj(Z[N - k])) / 2 and
/// Y[k] = (Z[k] - conj(Z[N - k])) / 2i): two FFTs of 2880 per pair of frames, about four
/// times less work. The chirps are computed in double precision from n^2 mod 2N (exact); the
/// magnitudes match a direct DFT to float rounding.
final class PairedSpectrum {
    let size: Int
    /// Bins per spectrum: `size / 2` (madmom's STFT drops the Nyquist bin and, for odd sizes,
    /// the last one).
    let binCount: Int
    /// The two frames' samples, ``size`` each: fill them before ``transform(first:second:)``.
    let first: UnsafeMutablePointer<Float>
    let second: UnsafeMutablePointer<Float>
    private let fft: ComplexFFT
    /// w[n] for n < size, interleaved (re, im).
    private let chirp: [Float]
    /// The FFT of the convolution kernel conj(w[m]) (m = -(size-1)...size-1, wrapped), divided
    /// by the FFT size so the backward transform comes back unscaled; interleaved.
    private let kernel: [Float]

    init(size: Int) {
        precondition(size >= 2)
        self.size = size
        binCount = size / 2
        let length = FFTSize.atLeast(2 * size - 1)
        fft = ComplexFFT(size: length)
        first = .allocate(capacity: size)
        first.initialize(repeating: 0, count: size)
        second = .allocate(capacity: size)
        second.initialize(repeating: 0, count: size)
        var chirp = [Float](repeating: 0, count: 2 * size)
        var w = [(re: Double, im: Double)]()
        for n in 0..<size {
            let angle = -Double.pi * Double((n * n) % (2 * size)) / Double(size)
            w.append((cos(angle), sin(angle)))
            chirp[2 * n] = Float(cos(angle))
            chirp[2 * n + 1] = Float(sin(angle))
        }
        self.chirp = chirp
        // The kernel conj(w[m]) at m and at length - m, transformed once.
        let values = fft.values
        values.update(repeating: 0, count: 2 * length)
        for m in 0..<size {
            for index in m == 0 ? [0] : [m, length - m] {
                values[2 * index] = Float(w[m].re / Double(length))
                values[2 * index + 1] = Float(-w[m].im / Double(length))
            }
        }
        fft.forward()
        kernel = Array(UnsafeBufferPointer(start: values, count: 2 * length))
    }

    deinit {
        first.deallocate()
        second.deallocate()
    }

    /// Writes the ``binCount`` magnitudes of ``first``'s and ``second``'s DFTs.
    func transform(first magnitudesOfFirst: UnsafeMutablePointer<Float>, second magnitudesOfSecond: UnsafeMutablePointer<Float>) {
        let values = fft.values
        let length = fft.size
        chirp.withUnsafeBufferPointer { w in
            // a[n] = (x[n] + i y[n]) w[n], zero beyond the frame.
            for n in 0..<size {
                let x = first[n], y = second[n], re = w[2 * n], im = w[2 * n + 1]
                values[2 * n] = x * re - y * im
                values[2 * n + 1] = x * im + y * re
            }
        }
        (values + 2 * size).update(repeating: 0, count: 2 * (length - size))
        fft.forward()
        kernel.withUnsafeBufferPointer { b in
            for index in 0..<length {
                let re = values[2 * index], im = values[2 * index + 1], kre = b[2 * index], kim = b[2 * index + 1]
                values[2 * index] = re * kre - im * kim
                values[2 * index + 1] = re * kim + im * kre
            }
        }
        fft.backward()
        chirp.withUnsafeBufferPointer { w in
            /// Z[k] = w[k] c[k].
            func z(_ k: Int) -> (re: Float, im: Float) {
                let re = values[2 * k], im = values[2 * k + 1], wre = w[2 * k], wim = w[2 * k + 1]
                return (re * wre - im * wim, re * wim + im * wre)
            }
            for k in 0..<binCount {
                let a = z(k), b = z(k == 0 ? 0 : size - k)
                // X[k] = (Z[k] + conj(Z[N-k])) / 2, Y[k] = (Z[k] - conj(Z[N-k])) / 2i.
                let xre = (a.re + b.re) / 2, xim = (a.im - b.im) / 2
                let yre = (a.im + b.im) / 2, yim = (b.re - a.re) / 2
                magnitudesOfFirst[k] = (xre * xre + xim * xim).squareRoot()
                magnitudesOfSecond[k] = (yre * yre + yim * yim).squareRoot()
            }
        }
    }
}
