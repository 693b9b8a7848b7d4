import Foundation
import Testing
import TactusDSP
import TactusDetector

/// libsoxr through ``Resampler`` and the shared ``ResampledSignal``.
@Suite struct ResamplerTests {
    static func sine(hz: Double, rate: Double, count: Int, amplitude: Double = 0.5) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * hz * Double($0) / rate)) }
    }

    /// Everything `resampler` gives for `input`, fed in blocks of `block`.
    static func resample(_ input: [Float], with resampler: Resampler, block: Int) -> [Float] {
        var output: [Float] = []
        input.forEachBlock(of: block) { resampler.process($0) { output.append(contentsOf: $0) } }
        resampler.finish { output.append(contentsOf: $0) }
        return output
    }

    @Test(arguments: [(44_100.0, 22_050.0), (48_000.0, 22_050.0), (8_000.0, 22_050.0), (96_000.0, 44_100.0)])
    func aToneKeepsItsLevelAndItsTime(rates: (input: Double, output: Double)) throws {
        let seconds = 2.0
        let input = Self.sine(hz: 1000, rate: rates.input, count: Int(seconds * rates.input))
        let output = Self.resample(input, with: try Resampler(inputRate: rates.input, outputRate: rates.output), block: 333)
        // As many samples as the duration asks for (libsoxr's own rounding: within one).
        #expect(abs(Double(output.count) - seconds * rates.output) <= 1, "\(output.count) samples")
        // Away from the edges the output is the same tone at the same time: no delay, no loss.
        let expected = Self.sine(hz: 1000, rate: rates.output, count: output.count)
        let middle = Int(0.1 * rates.output)..<(output.count - Int(0.1 * rates.output))
        let worst = middle.map { abs(output[$0] - expected[$0]) }.max()!
        #expect(worst < 1e-3, "largest difference \(worst)")
    }

    @Test func whatTheLowerRateCannotHoldIsRemoved() throws {
        // 15 kHz is above 22.05 kHz's Nyquist frequency: it must not fold down to 7.05 kHz.
        let input = Self.sine(hz: 15_000, rate: 44_100, count: 88_200)
        let output = Self.resample(input, with: try Resampler(inputRate: 44_100, outputRate: 22_050), block: 4096)
        let rms = (output[2205..<(output.count - 2205)].map { Double($0 * $0) }.reduce(0, +) / Double(output.count - 4410)).squareRoot()
        #expect(rms < 1e-3, "rms \(rms)")
    }

    @Test func theBlockSizesDoNotChangeTheOutput() throws {
        let input = Self.sine(hz: 440, rate: 44_100, count: 50_000) + Self.sine(hz: 3000, rate: 44_100, count: 30_000)
        let whole = Self.resample(input, with: try Resampler(inputRate: 44_100, outputRate: 22_050), block: 1 << 20)
        let pieces = Self.resample(input, with: try Resampler(inputRate: 44_100, outputRate: 22_050), block: 1)
        #expect(whole.count == pieces.count)
        #expect(zip(whole, pieces).map { abs($0 - $1) }.max()! < 1e-6)
    }

    @Test func impossibleRatesAreRefused() {
        #expect(throws: Resampler.Failure.self) { try Resampler(inputRate: 0, outputRate: 22_050) }
        #expect(ResampledSignal(key: .init(inputRate: -1, outputRate: 22_050)).failure != nil)
    }
}

@Suite struct ResampledSignalTests {
    /// Two owners feeding the same blocks get the song resampled once: each listener sees the
    /// same samples a lone resampler gives, once.
    @Test func ownersOfOneSongShareOneResampling() throws {
        let input = ResamplerTests.sine(hz: 700, rate: 48_000, count: 96_000)
        let alone = ResamplerTests.resample(input, with: try Resampler(inputRate: 48_000, outputRate: 22_050), block: 4096)
        let frontEnds = SharedFrontEnds()
        let key = ResampledSignal.Key(inputRate: 48_000, outputRate: 22_050)
        let first = frontEnds.shared(key) { ResampledSignal(key: key) }
        let second = frontEnds.shared(key) { ResampledSignal(key: key) }
        #expect(first === second)
        var heardByFirst: [Float] = [], heardBySecond: [Float] = []
        first.listen { heardByFirst.append(contentsOf: $0) }
        second.listen { heardBySecond.append(contentsOf: $0) }
        input.withUnsafeBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: 4096) {
                let block = UnsafeBufferPointer(rebasing: all[start..<min(start + 4096, all.count)])
                first.consume(block, at: start)
                second.consume(block, at: start)
            }
        }
        first.finish()
        second.finish()
        #expect(heardByFirst == alone)
        #expect(heardBySecond == alone)
        // Another rate is another signal.
        let other = ResampledSignal.Key(inputRate: 48_000, outputRate: 16_000)
        #expect(frontEnds.shared(other) { ResampledSignal(key: other) } !== first)
    }

    @Test func atTheSameRateTheSamplesPassUnchanged() {
        let input = ResamplerTests.sine(hz: 700, rate: 22_050, count: 10_000)
        let signal = ResampledSignal(key: .init(inputRate: 22_050, outputRate: 22_050))
        var heard: [Float] = []
        signal.listen { heard.append(contentsOf: $0) }
        input.withUnsafeBufferPointer { signal.consume($0, at: 0) }
        signal.finish()
        #expect(heard == input)
    }
}
