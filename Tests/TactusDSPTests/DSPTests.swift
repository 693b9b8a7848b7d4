import Foundation
import Testing
import TactusDSP

@Suite struct RealFFTTests {
    @Test func forwardThenInverseRestoresTheSignalScaledBySize() {
        let fft = RealFFT(size: 12)
        let signal: [Float] = [1, -2, 3, 0.5, 0, 0, 7, -1, 2, 2, -3, 4]
        signal.withUnsafeBufferPointer { fft.load($0) }
        fft.forward()
        fft.inverse()
        for (index, value) in signal.enumerated() {
            #expect(abs(fft.samples[index] / 12 - value) < 1e-4)
        }
    }

    @Test func aSineConcentratesInItsBin() {
        let size = 64
        let fft = RealFFT(size: size)
        for index in 0..<size { fft.samples[index] = Float(sin(2 * Double.pi * 5 * Double(index) / Double(size))) }
        fft.forward()
        var power = [Float](repeating: 0, count: fft.binCount)
        power.withUnsafeMutableBufferPointer { fft.powerSpectrum(into: $0) }
        #expect(power.firstIndex(of: power.max()!) == 5)
        #expect(abs(power[5] - Float(size * size) / 4) < 1e-2)
    }
}

@Suite struct ComplexFFTTests {
    /// Out of place the transforms give the values in place gives, and backward undoes
    /// forward (scaled by the size), leaving the spectrum in its own buffer.
    @Test func outOfPlaceIsInPlaceIntoASecondBuffer() {
        let size = 2880
        let inPlace = ComplexFFT(size: size), outOfPlace = ComplexFFT(size: size, outOfPlace: true)
        #expect(inPlace.spectrum == inPlace.values && outOfPlace.spectrum != outOfPlace.values)
        let signal = (0..<(2 * size)).map { Float(sin(Double($0) * 0.37)) + Float($0 % 7) * 0.1 }
        for fft in [inPlace, outOfPlace] { fft.values.update(from: signal, count: 2 * size) }
        inPlace.forward()
        outOfPlace.forward()
        #expect(Array(UnsafeBufferPointer(start: outOfPlace.spectrum, count: 2 * size))
            == Array(UnsafeBufferPointer(start: inPlace.spectrum, count: 2 * size)))
        outOfPlace.backward()
        let worst = (0..<(2 * size)).map { abs(outOfPlace.values[$0] / Float(size) - signal[$0]) }.max()!
        #expect(worst < 1e-4)
    }
}

@Suite struct AutocorrelationTests {
    @Test func matchesTheDirectSum() {
        let signal: [Float] = (0..<300).map { (index: Int) -> Float in
            let time = Double(index)
            return Float(sin(time * 0.37) + 0.3 * cos(time * 1.9))
        }
        let autocorrelation = FFTAutocorrelation(length: signal.count, maxLag: 50).compute(signal)
        for lag in [0, 1, 17, 50] {
            let direct = (0..<(signal.count - lag)).reduce(Float(0)) { $0 + signal[$1] * signal[$1 + lag] }
            #expect(abs(autocorrelation[lag] - direct) < 1e-2 * max(1, abs(direct)))
        }
    }

    @Test func fftSizesAreEvenWithOnlySmallPrimeFactors() {
        #expect(FFTSize.atLeast(1) == 2)
        #expect(FFTSize.atLeast(7) == 8)
        #expect(FFTSize.atLeast(1001) == 1024)
        #expect(FFTSize.atLeast(961) == 972)
        // 1,125 = 3^2 * 5^3 is smooth but odd: FFTW's real transform of it is slow.
        #expect(FFTSize.atLeast(1114) == 1152)
        #expect(FFTSize.atLeast(371) == 384)
    }

    @Test func autocorrelationSizesArePowersOfTwo() {
        #expect(FFTSize.powerOfTwo(atLeast: 0) == 2)
        #expect(FFTSize.powerOfTwo(atLeast: 3) == 4)
        #expect(FFTSize.powerOfTwo(atLeast: 4096) == 4096)
        #expect(FFTSize.powerOfTwo(atLeast: 4097) == 8192)
        #expect(FFTAutocorrelation(length: 1200, maxLag: 1199).fftSize == 4096)
    }

    /// An envelope's autocorrelation asked up to a lag is the full one cut there (to float
    /// rounding), from shorter transforms; asking the full one again gives every lag.
    @Test func anEnvelopeAutocorrelationCutAtALagMatchesTheFullOne() {
        let envelope: [Float] = (0..<2000).map { Float(sin(Double($0) * 0.21) + 0.5 * cos(Double($0) * 0.043)) }
        let engine = EnvelopeAutocorrelation()
        let full = engine.of(envelope[...])
        let cut = engine.of(envelope[...], maxLag: 300)
        #expect(full.count == 2000 && cut.count == 301)
        for lag in 0...300 {
            #expect(abs(cut[lag] - full[lag]) <= 1e-4 * abs(full[0]), "lag \(lag)")
        }
        #expect(engine.of(envelope[...]).count == 2000)
    }
}

@Suite struct PeakTests {
    @Test func parabolicInterpolationFindsTheVertex() {
        // y = -(x - 0.3)^2 sampled at -1, 0, 1.
        let vertex = Peaks.parabolicVertex(left: -1.69, centre: -0.09, right: -0.49)
        #expect(abs(vertex.offset - 0.3) < 1e-9)
        #expect(abs(vertex.value) < 1e-9)
    }

    @Test func peaksAreSortedByHeight() {
        let values: [Float] = [0, 1, 0, 3, 0, 2, 0]
        #expect(Peaks.find(in: values, range: 0...6).map(\.index) == [3, 5, 1])
    }

    @Test func halfHannStartsAtOneAndEndsAtZero() {
        let window = Window.halfHann(length: 10)
        #expect(window.count == 11)
        #expect(window.first == 1)
        #expect(abs(window.last!) < 1e-6)
    }
}

@Suite struct BandPowersTests {
    /// Spectra of successive frames of a chord with a decaying click train, so that the bins
    /// span many orders of magnitude (sums whose rounding depends on their order).
    private static func spectra(count: Int, size: Int) -> [[Float]] {
        let fft = RealFFT(size: size)
        return (0..<count).map { frame in
            for index in 0..<size {
                let time = Double(frame * size / 2 + index) / 8000
                let click = index % 97 == 0 ? exp(-Double(frame)) * 3 : 0
                fft.samples[index] = Float(sin(2 * .pi * 440 * time) + 0.01 * sin(2 * .pi * 1_234.5 * time) + click)
            }
            fft.forward()
            return fft.spectrum.withMemoryRebound(to: Float.self) { Array($0) }
        }
    }

    /// Every spectrum's band powers are SquaredSum's, bit for bit, whatever the band's width
    /// (none, under eight floats, whole groups of eight and more) and however many spectra the
    /// last batch holds.
    @Test func bandPowersAreSquaredSumsToTheBit() {
        let bands = [0..<0, 0..<1, 1..<3, 3..<10, 10..<18, 18..<27, 27..<43, 43..<100, 100..<258, 5..<5]
        let spectra = Self.spectra(count: 7, size: 512)
        let powers = BandPowers(bands: bands)
        var computed: [Float] = []
        for spectrum in spectra {
            if spectrum.withUnsafeBufferPointer({ powers.add($0) }) {
                powers.flush { computed.append(contentsOf: $0) }
            }
        }
        #expect(powers.count == 3)
        powers.flush { computed.append(contentsOf: $0) }
        #expect(powers.count == 0)
        let expected = spectra.flatMap { spectrum in
            bands.map { band in spectrum.withUnsafeBufferPointer { SquaredSum.of($0, band) } }
        }
        #expect(computed.map(\.bitPattern) == expected.map(\.bitPattern))
    }
}
