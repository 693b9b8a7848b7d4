import Foundation
import TactusAudio
import TactusTestSupport
import Testing

/// Signals and measurements shared by the audio tests.
enum TestSignals {
    /// Accepts songs from one second, so round trips can use short signals.
    static let shortSongs = DecodingOptions(minimumSeconds: 1)

    /// A stereo test signal: a click track over a 440 Hz tone on the left, a 660 Hz tone and
    /// noise on the right, so the downmix differs from either channel.
    static func stereo(seconds: Double, sampleRate: Int) -> [[Float]] {
        let rate = Double(sampleRate)
        let clicks = Synth.clickTrack(bpm: 120, seconds: seconds, sampleRate: rate)
        let low = Synth.sine(hz: 440, seconds: seconds, sampleRate: rate, amplitude: 0.3)
        let high = Synth.sine(hz: 660, seconds: seconds, sampleRate: rate, amplitude: 0.3)
        let noise = Synth.whiteNoise(seconds: seconds, sampleRate: rate, amplitude: 0.1, seed: 3)
        let left = zip(clicks, low).map { 0.6 * $0 + $1 }
        let right = zip(high, noise).map { $0 + $1 }
        return [left, right]
    }

    /// A mono test signal: a drum pattern at 120 BPM.
    static func mono(seconds: Double, sampleRate: Int) -> [[Float]] {
        [Synth.drumPattern(bpm: 120, seconds: seconds, sampleRate: Double(sampleRate))]
    }

    /// The average of the channels, frame by frame: what the decoder should deliver.
    static func downmix(_ channels: [[Float]]) -> [Float] {
        let scale = 1 / Float(channels.count)
        return (0..<channels[0].count).map { index in channels.reduce(0) { $0 + $1[index] } * scale }
    }

    /// Pearson correlation of the common prefix of `a` and `b`.
    static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let count = min(a.count, b.count)
        guard count > 1 else { return 0 }
        let a = a.prefix(count), b = b.prefix(count)
        let meanA = a.reduce(0.0) { $0 + Double($1) } / Double(count)
        let meanB = b.reduce(0.0) { $0 + Double($1) } / Double(count)
        var product = 0.0, squaresA = 0.0, squaresB = 0.0
        for (x, y) in zip(a, b) {
            let dx = Double(x) - meanA, dy = Double(y) - meanB
            product += dx * dy
            squaresA += dx * dx
            squaresB += dy * dy
        }
        return product / (squaresA * squaresB).squareRoot()
    }

    static func correlation(_ a: [Float], _ b: [Float]) -> Double {
        correlation(a[...], b[...])
    }

    /// The largest correlation of `decoded` with `original` shifted by up to `maxLag` samples
    /// either way (lossy codecs may delay the signal), over half a second from the first.
    static func bestCorrelation(_ original: [Float], _ decoded: [Float], maxLag: Int) -> Double {
        let window = min(original.count, decoded.count, 24_000 + 2 * maxLag) - 2 * maxLag
        return (-maxLag...maxLag).map { lag in
            lag >= 0
                ? correlation(original[maxLag..<maxLag + window], decoded[(maxLag + lag)...])
                : correlation(original[(maxLag - lag)...], decoded[maxLag..<maxLag + window])
        }.max() ?? 0
    }

    /// The largest absolute difference over the common prefix.
    static func maximumDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }
}

extension AudioFileWriter.Format: CustomTestStringConvertible {
    public var testDescription: String { "\(self)" }
}
