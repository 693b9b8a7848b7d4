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
/// magnitudes match a direct DFT to float rounding. The FFTs are out of place (``ComplexFFT``):
/// the forward one from the chirped frames into the spectrum, the backward one back.
final class PairedSpectrum {
    let size: Int
    /// Bins per spectrum: `size / 2` (madmom's STFT drops the Nyquist bin and, for odd sizes,
    /// the last one).
    let binCount: Int
    /// The two frames' samples, ``size`` each: fill them before ``transform(first:second:)``.
    let first: UnsafeMutablePointer<Float>
    let second: UnsafeMutablePointer<Float>
    private let fft: ComplexFFT
    /// w[n] for n < size, real and imaginary parts apart (so eight of each load at once).
    private let chirp: Split
    /// The FFT of the convolution kernel conj(w[m]) (m = -(size-1)...size-1, wrapped), divided
    /// by the FFT size so the backward transform comes back unscaled.
    private let kernel: Split
    /// Z[k] = w[k] c[k] for k < size, between the backward transform and the magnitudes.
    private let z: Split

    /// Complex values as two arrays, real parts and imaginary parts, allocated once.
    private struct Split {
        let re: UnsafeMutablePointer<Float>
        let im: UnsafeMutablePointer<Float>

        init(count: Int) {
            re = .allocate(capacity: count)
            re.initialize(repeating: 0, count: count)
            im = .allocate(capacity: count)
            im.initialize(repeating: 0, count: count)
        }

        func deallocate() {
            re.deallocate()
            im.deallocate()
        }
    }

    init(size: Int) {
        precondition(size >= 2)
        self.size = size
        binCount = size / 2
        let length = FFTSize.atLeast(2 * size - 1)
        fft = ComplexFFT(size: length, outOfPlace: true)
        first = .allocate(capacity: size)
        first.initialize(repeating: 0, count: size)
        second = .allocate(capacity: size)
        second.initialize(repeating: 0, count: size)
        chirp = Split(count: size)
        z = Split(count: size)
        var w = [(re: Double, im: Double)]()
        for n in 0..<size {
            let angle = -Double.pi * Double((n * n) % (2 * size)) / Double(size)
            w.append((cos(angle), sin(angle)))
            chirp.re[n] = Float(cos(angle))
            chirp.im[n] = Float(sin(angle))
        }
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
        kernel = Split(count: length)
        for index in 0..<length {
            kernel.re[index] = fft.spectrum[2 * index]
            kernel.im[index] = fft.spectrum[2 * index + 1]
        }
    }

    deinit {
        first.deallocate()
        second.deallocate()
        chirp.deallocate()
        kernel.deallocate()
        z.deallocate()
    }

    /// Writes the ``binCount`` magnitudes of ``first``'s and ``second``'s DFTs.
    ///
    /// Each loop takes eight values at a time (``Lanes``; the FFT's interleaved values split
    /// into their even, real, and odd, imaginary, halves and joined again), then the rest one
    /// by one: each value gets the same products, sums and square roots as one at a time.
    func transform(first magnitudesOfFirst: UnsafeMutablePointer<Float>, second magnitudesOfSecond: UnsafeMutablePointer<Float>) {
        let values = fft.values
        let length = fft.size
        let width = Lanes.scalarCount
        // a[n] = (x[n] + i y[n]) w[n], zero beyond the frame.
        var n = 0
        while n + width <= size {
            let x = Self.load(first, n), y = Self.load(second, n), re = Self.load(chirp.re, n), im = Self.load(chirp.im, n)
            Self.store(x * re - y * im, x * im + y * re, interleavedAt: values, n)
            n += width
        }
        while n < size {
            let x = first[n], y = second[n], re = chirp.re[n], im = chirp.im[n]
            values[2 * n] = x * re - y * im
            values[2 * n + 1] = x * im + y * re
            n += 1
        }
        (values + 2 * size).update(repeating: 0, count: 2 * (length - size))
        fft.forward()
        // The convolution: the spectrum times the kernel's.
        let spectrum = fft.spectrum
        var index = 0
        while index + width <= length {
            let (re, im) = Self.load(interleavedAt: spectrum, index)
            let kre = Self.load(kernel.re, index), kim = Self.load(kernel.im, index)
            Self.store(re * kre - im * kim, re * kim + im * kre, interleavedAt: spectrum, index)
            index += width
        }
        while index < length {
            let re = spectrum[2 * index], im = spectrum[2 * index + 1], kre = kernel.re[index], kim = kernel.im[index]
            spectrum[2 * index] = re * kre - im * kim
            spectrum[2 * index + 1] = re * kim + im * kre
            index += 1
        }
        fft.backward()
        // Z[k] = w[k] c[k].
        let zre = z.re, zim = z.im
        var k = 0
        while k + width <= size {
            let (re, im) = Self.load(interleavedAt: values, k)
            let wre = Self.load(chirp.re, k), wim = Self.load(chirp.im, k)
            Self.store(re * wre - im * wim, zre, k)
            Self.store(re * wim + im * wre, zim, k)
            k += width
        }
        while k < size {
            let re = values[2 * k], im = values[2 * k + 1], wre = chirp.re[k], wim = chirp.im[k]
            zre[k] = re * wre - im * wim
            zim[k] = re * wim + im * wre
            k += 1
        }
        // X[k] = (Z[k] + conj(Z[N-k])) / 2, Y[k] = (Z[k] - conj(Z[N-k])) / 2i, with Z[N] = Z[0].
        func magnitudes(_ are: Lanes, _ aim: Lanes, _ bre: Lanes, _ bim: Lanes) -> (first: Lanes, second: Lanes) {
            let xre = (are + bre) / 2, xim = (aim - bim) / 2
            let yre = (aim + bim) / 2, yim = (bre - are) / 2
            return ((xre * xre + xim * xim).squareRoot(), (yre * yre + yim * yim).squareRoot())
        }
        let dc = magnitudes(Lanes(repeating: zre[0]), Lanes(repeating: zim[0]), Lanes(repeating: zre[0]), Lanes(repeating: zim[0]))
        magnitudesOfFirst[0] = dc.first[0]
        magnitudesOfSecond[0] = dc.second[0]
        k = 1
        while k + width <= binCount {
            // Z[N-k] for the lanes k..<(k + 8): eight values read backwards from N - k.
            let bre = Self.reversed(Self.load(zre, size - k - (width - 1))), bim = Self.reversed(Self.load(zim, size - k - (width - 1)))
            let (first, second) = magnitudes(Self.load(zre, k), Self.load(zim, k), bre, bim)
            Self.store(first, magnitudesOfFirst, k)
            Self.store(second, magnitudesOfSecond, k)
            k += width
        }
        while k < binCount {
            let (first, second) = magnitudes(
                Lanes(repeating: zre[k]), Lanes(repeating: zim[k]), Lanes(repeating: zre[size - k]), Lanes(repeating: zim[size - k]))
            magnitudesOfFirst[k] = first[0]
            magnitudesOfSecond[k] = second[0]
            k += 1
        }
    }

    typealias Lanes = SIMD8<Float>

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>, _ index: Int) -> Lanes {
        UnsafeRawPointer(pointer + index).loadUnaligned(as: Lanes.self)
    }

    @inline(__always)
    private static func store(_ value: Lanes, _ pointer: UnsafeMutablePointer<Float>, _ index: Int) {
        UnsafeMutableRawPointer(pointer + index).storeBytes(of: value, as: Lanes.self)
    }

    @inline(__always)
    private static func reversed(_ value: Lanes) -> Lanes {
        Lanes(value[7], value[6], value[5], value[4], value[3], value[2], value[1], value[0])
    }

    /// The complex values `index..<(index + 8)` of interleaved (re, im) floats.
    @inline(__always)
    private static func load(interleavedAt pointer: UnsafeMutablePointer<Float>, _ index: Int) -> (re: Lanes, im: Lanes) {
        let pairs = UnsafeRawPointer(pointer + 2 * index).loadUnaligned(as: SIMD16<Float>.self)
        return (pairs.evenHalf, pairs.oddHalf)
    }

    @inline(__always)
    private static func store(_ re: Lanes, _ im: Lanes, interleavedAt pointer: UnsafeMutablePointer<Float>, _ index: Int) {
        var pairs = SIMD16<Float>()
        pairs.evenHalf = re
        pairs.oddHalf = im
        UnsafeMutableRawPointer(pointer + 2 * index).storeBytes(of: pairs, as: SIMD16<Float>.self)
    }
}
