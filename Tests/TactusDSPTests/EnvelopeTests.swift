import Foundation
import Testing
import TactusDSP
import TactusDetector

/// Decaying 1 kHz clicks every `60 / bpm` seconds: the simplest signal with a known tempo.
private func clicks(bpm: Double, seconds: Double, sampleRate: Double) -> [Float] {
    var signal = [Float](repeating: 0, count: Int(seconds * sampleRate))
    var time = 0.0
    while time < seconds {
        let start = Int((time * sampleRate).rounded())
        for offset in 0..<Int(0.02 * sampleRate) where start + offset < signal.count {
            let t = Double(offset) / sampleRate
            signal[start + offset] += Float(0.8 * sin(2 * .pi * 1000 * t) * exp(-t / 0.004))
        }
        time += 60 / bpm
    }
    return signal
}

private func envelope(of signal: [Float], sampleRate: Double, blockSize: Int = 1000) -> OnsetStrengthEnvelope {
    OnsetStrengthAccumulator.envelope(
        of: signal, sampleRate: sampleRate, configuration: OnsetStrengthConfiguration(bandEdgesHz: [0, 500, 2000, 8000]),
        blockSize: blockSize)
}

@Suite struct BlockEnergyTests {
    @Test(arguments: [22_050.0, 44_100.0, 48_000.0])
    func blocksLast23MillisecondsAndHoldTheMeanSquare(sampleRate: Double) {
        let accumulator = BlockEnergyAccumulator(sampleRate: sampleRate)
        #expect(abs(accumulator.hopSeconds - 1024 / 44_100) < 2e-5)
        let sine = (0..<Int(sampleRate)).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / sampleRate)) }
        // Uneven block sizes must not matter.
        sine.withUnsafeBufferPointer { all in
            accumulator.consume(UnsafeBufferPointer(rebasing: all[0..<777]))
            accumulator.consume(UnsafeBufferPointer(rebasing: all[777...]))
        }
        let values = accumulator.finish()
        #expect(values.count == Int((sampleRate / Double(accumulator.blockLength)).rounded(.up)))
        for value in values.dropLast() {
            #expect(abs(value - 0.125) < 0.005)  // mean square of a sine of amplitude 0.5
        }
    }
}

extension BlockEnergyTests {
    /// The envelope is the same to the bit however the song is cut into calls (each block is
    /// summed whole, from its start): what a decoder's frame size must not change.
    @Test func theEnvelopeDoesNotDependOnHowTheSongIsCut() {
        let signal = clicks(bpm: 123, seconds: 5, sampleRate: 44_100)
        func envelope(cut: Int) -> [Float] {
            let accumulator = BlockEnergyAccumulator(sampleRate: 44_100)
            signal.forEachBlock(of: cut) { accumulator.consume($0) }
            return accumulator.finish()
        }
        let whole = envelope(cut: signal.count)
        for cut in [1, 777, 1152, 4096, 4608] {
            #expect(envelope(cut: cut) == whole, "cut into pieces of \(cut)")
        }
    }
}

@Suite struct OnsetStrengthTests {
    /// The onset envelope and the energies between its frames are the same to the bit however
    /// the song is cut into blocks.
    @Test func theEnvelopeAndItsEnergiesDoNotDependOnHowTheSongIsCut() {
        let signal = clicks(bpm: 123, seconds: 4, sampleRate: 44_100)
        let whole = envelope(of: signal, sampleRate: 44_100, blockSize: signal.count)
        let energies = { (env: OnsetStrengthEnvelope) in (0..<env.frameCount).map { env.meanSquare(frames: $0..<($0 + 1)) } }
        for cut in [1, 777, 1152, 4608] {
            let cutUp = envelope(of: signal, sampleRate: 44_100, blockSize: cut)
            #expect(cutUp.bands == whole.bands, "cut into pieces of \(cut)")
            #expect(energies(cutUp) == energies(whole), "cut into pieces of \(cut)")
            #expect(cutUp.meanSquare(frames: 0..<cutUp.frameCount) == whole.meanSquare(frames: 0..<whole.frameCount))
        }
    }

    @Test func clicksGiveOnsetPeaksOnePerBeat() {
        let env = envelope(of: clicks(bpm: 120, seconds: 4, sampleRate: 44_100), sampleRate: 44_100)
        #expect(abs(env.frameRate - 100) < 1e-9)
        #expect(abs(env.frameCount - 400) <= 3)
        let summed = (0..<env.frameCount).map { frame in env.bands.reduce(Float(0)) { $0 + $1[frame] } }
        let strongest = summed.max()!
        let peaks = summed.indices.filter { summed[$0] > 0.5 * strongest && ($0 == 0 || summed[$0 - 1] <= 0.5 * strongest) }
        // The click at 0 s falls in the first frame, which has no predecessor to differ from.
        #expect(peaks.count == 7)
        for (index, frame) in peaks.enumerated() {
            #expect(abs(frame - (index + 1) * 50) <= 2)
        }
    }

    @Test func theEnvelopeDoesNotDependOnTheSampleRate() {
        let envelopes = [22_050.0, 44_100.0, 48_000.0].map {
            envelope(of: clicks(bpm: 100, seconds: 3, sampleRate: $0), sampleRate: $0)
        }
        let reference = envelopes[1]
        for other in [envelopes[0], envelopes[2]] {
            let frames = min(reference.frameCount, other.frameCount)
            for band in 0..<2 {
                let a = reference.bands[band].prefix(frames), b = other.bands[band].prefix(frames)
                let peak = a.max()!
                let difference = zip(a, b).map { abs($0 - $1) }.max()!
                #expect(difference < 0.2 * peak, "band \(band)")
            }
        }
    }

    @Test func windowEnergyIsTheMeanSquareOfTheSamples() {
        let signal = [Float](repeating: 0.5, count: 44_100) + [Float](repeating: 0, count: 44_100)
        let env = envelope(of: signal, sampleRate: 44_100, blockSize: 333)
        #expect(abs(env.meanSquare(frames: 0..<100) - 0.25) < 1e-6)
        #expect(abs(env.meanSquare(frames: 100..<200)) < 1e-9)
        #expect(abs(env.meanSquare(frames: 0..<10_000) - 0.125) < 1e-6)
    }
}
