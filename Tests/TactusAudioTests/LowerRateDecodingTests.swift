import Foundation
import TactusAudio
import TactusDSP
import TactusTestSupport
import Testing

/// ``DecodingOptions/minimumSampleRate``: libmpg123 synthesises MPEG audio at half or a quarter
/// of its rate when that is enough; other formats keep theirs.
@Suite struct LowerRateDecodingTests {
    /// A 10 s chord (220, 1000 and 5000 Hz) with a click every half second, as stereo.
    static func music(sampleRate: Int) -> [[Float]] {
        let count = 10 * sampleRate
        let left = (0..<count).map { index -> Float in
            let t = Double(index) / Double(sampleRate)
            let click = index % (sampleRate / 2) < 64 ? 0.3 : 0.0
            return Float(0.2 * sin(2 * .pi * 220 * t) + 0.15 * sin(2 * .pi * 1000 * t) + 0.1 * sin(2 * .pi * 5000 * t) + click)
        }
        return [left, left.map { $0 * 0.8 }]
    }

    @Test(arguments: [(44_100, 22_050.0, 22_050), (48_000, 22_050.0, 24_000), (44_100, 11_025.0, 11_025), (32_000, 22_050.0, 32_000), (44_100, 30_000.0, 44_100), (22_050, 22_050.0, 22_050)])
    func mp3IsSynthesisedAtTheLowestRateAtOrAboveTheMinimum(rates: (file: Int, minimum: Double, delivered: Int)) throws {
        let bytes = try AudioFileWriter(.mp3(.constant)).encode(Self.music(sampleRate: rates.file), sampleRate: rates.file)
        let full = try AudioStream(.bytes(bytes, name: "song.mp3")).readAll()
        let stream = try AudioStream(.bytes(bytes, name: "song.mp3"), options: DecodingOptions(minimumSampleRate: rates.minimum))
        #expect(stream.sampleRate == rates.delivered)
        #expect(stream.metadata.sampleRate == rates.file)  // the file's rate is still reported
        let lower = try stream.readAll()
        #expect(lower.sampleRate == rates.delivered)
        // The same duration, exact after the end, and the expected count at the delivered rate.
        #expect(abs(lower.metadata.duration - full.metadata.duration) < 0.03, "\(lower.metadata.duration) vs \(full.metadata.duration)")
        #expect(abs(Double(lower.samples.count) / Double(rates.delivered) - lower.metadata.duration) < 1e-9)
        if let expected = stream.expectedFrames {
            #expect(abs(expected - lower.samples.count) <= 1152)
        }
        // The same signal: the full-rate decoding brought to the delivered rate by libsoxr has
        // the same level in every 20 ms block (libmpg123's synthesis is offset from libsoxr's
        // by a fraction of a millisecond, so the samples themselves are not compared).
        var reference: [Float] = []
        if rates.delivered == rates.file {
            reference = full.samples
        } else {
            let resampler = try Resampler(inputRate: Double(rates.file), outputRate: Double(rates.delivered))
            full.samples.withUnsafeBufferPointer { resampler.process($0) { reference.append(contentsOf: $0) } }
            resampler.finish { reference.append(contentsOf: $0) }
        }
        let block = rates.delivered / 50
        let count = min(reference.count, lower.samples.count) / block * block
        let rms = { (samples: [Float], start: Int) in
            (samples[start..<(start + block)].map { Double($0 * $0) }.reduce(0, +) / Double(block)).squareRoot()
        }
        let worst = stride(from: block, to: count - block, by: block).map { start in
            abs(rms(lower.samples, start) - rms(reference, start)) / max(rms(reference, start), 1e-3)
        }.max() ?? .infinity
        #expect(worst < 0.05, "largest relative difference of a 20 ms block's level: \(worst)")
    }

    @Test func otherFormatsKeepTheirRate() throws {
        let bytes = try AudioFileWriter(.flac).encode(Self.music(sampleRate: 44_100), sampleRate: 44_100)
        let stream = try AudioStream(.bytes(bytes, name: "song.flac"), options: DecodingOptions(minimumSampleRate: 22_050))
        #expect(stream.sampleRate == 44_100)
        #expect(try stream.readAll().samples.count == 441_000)
    }
}
