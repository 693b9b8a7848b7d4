import Foundation
import Testing
import TactusDSP

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
    let accumulator = OnsetStrengthAccumulator(
        sampleRate: sampleRate, configuration: OnsetStrengthConfiguration(bandEdgesHz: [0, 500, 2000, 8000]))
    signal.withUnsafeBufferPointer { all in
        var start = 0
        while start < all.count {
            let end = min(start + blockSize, all.count)
            accumulator.consume(UnsafeBufferPointer(rebasing: all[start..<end]))
            start = end
        }
    }
    return accumulator.finish()
}

/// The plain autocorrelation salience of the ``TempoVote`` documentation.
private func autocorrelationSalience() -> TempoVote.Salience {
    let autocorrelation = EnvelopeAutocorrelation()
    return { window, bpms in
        let r = autocorrelation.summed(window)
        guard r[0] > 0 else { return bpms.map { _ in 0 } }
        return bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / Double(r[0]) }
    }
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

@Suite struct OnsetStrengthTests {
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

@Suite struct TempoVoteTests {
    @Test(arguments: [72.0, 123.0, 181.0])
    func aClickTrackVotesForItsTempo(bpm: Double) {
        let env = envelope(of: clicks(bpm: bpm, seconds: 20, sampleRate: 22_050), sampleRate: 22_050)
        let vote = TempoVote(configuration: TempoVoteConfiguration(minBPM: 60, maxBPM: 200))
        let result = vote.decide(env, salience: autocorrelationSalience())
        let found = try! #require(result.bpm)
        let factor = [1.0, 2, 0.5, 3, 1.0 / 3].first { abs(found - bpm * $0) <= 0.01 * bpm * $0 }
        #expect(factor != nil, "found \(found) for \(bpm)")
        #expect(result.windows.count == 4)  // at 0, 4 and 8 s, and one ending at the song's end
        #expect(result.windows.allSatisfy { $0.energy > 0 && $0.strength > 0.3 })
        #expect(result.confidence > 0.3)
        #expect(result.candidates.first?.bpm == found)
        #expect(result.candidates.count <= 5)
    }

    @Test func silenceHasNoTempo() {
        let env = envelope(of: [Float](repeating: 0, count: 22_050 * 10), sampleRate: 22_050)
        let result = TempoVote(configuration: TempoVoteConfiguration()).decide(env, salience: autocorrelationSalience())
        #expect(result.bpm == nil)
        #expect(result.reason == "silence")
        #expect(result.windows.allSatisfy { $0.bpm == nil && $0.energy == 0 })
    }

    @Test func aWindowLayoutCoversTheWholeSong() {
        let vote = TempoVote(configuration: TempoVoteConfiguration(windowSeconds: 8, hopSeconds: 4))
        #expect(vote.windowRanges(frameCount: 1000, frameRate: 100) == [0..<800, 200..<1000])
        #expect(vote.windowRanges(frameCount: 1200, frameRate: 100) == [0..<800, 400..<1200])
        #expect(vote.windowRanges(frameCount: 500, frameRate: 100) == [0..<500])
        #expect(vote.grid.first == 60 && abs(vote.grid.last! - 200) < 1e-9)
    }
}
