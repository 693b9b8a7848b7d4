import Foundation

/// The beat activation at a multiple of the network's frame rate, for a periodicity analysis
/// that reads lags between whole frames: linear interpolation between frames (frame `k` lands
/// on `k * factor`), then a Hann window of `2 * factor + 1` taps (two network frames), so
/// that a beat falling between two frames, which the network marks on the nearer one, does
/// not leave the autocorrelation peaked at whole frames.
struct BeatActivationUpsampler {
    let factor: Int

    func upsample(_ values: [Float]) -> [Float] {
        guard factor > 1, let last = values.last else { return values }
        var linear = [Float](repeating: last, count: values.count * factor)
        for index in 0..<(values.count - 1) {
            let from = values[index], to = values[index + 1]
            for step in 0..<factor {
                linear[index * factor + step] = from + (to - from) * Float(step) / Float(factor)
            }
        }
        let width = 2 * factor + 1
        let taps = (0..<width).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0 + 1) / Double(width + 1))) }
        let total = taps.reduce(0, +)
        let centre = width / 2
        return linear.indices.map { index in
            var sum: Float = 0
            for (tap, weight) in taps.enumerated() {
                let source = min(max(index + tap - centre, 0), linear.count - 1)
                sum += weight * linear[source]
            }
            return sum / total
        }
    }
}
