import Foundation

/// Tempo from a beat activation by a bank of resonating comb filters (Böck, Krebs and Widmer,
/// "Accurate tempo estimation based on recurrent neural networks and resonating comb filters",
/// ISMIR 2015): one feedback comb filter `y(t) = x(t) + alpha * y(t - tau)` per delay `tau`
/// (whole frames) of the tempo range; at each frame the filter with the largest output wins,
/// and its output is added to the histogram bin of its delay. A beat activation that pulses
/// every `tau` frames makes the filter of that delay resonate most, frame after frame.
///
/// Memory is a few values per frame (one filter's output at a time, and the winner so far of
/// each frame), whatever the number of delays.
struct ResonatingCombFilters {
    /// The feedback gain (0.79 in the paper).
    var alpha: Float
    /// The delays, in frames.
    var delays: ClosedRange<Int>

    /// The winning delay of each frame and its filter's output.
    struct Winners {
        var delays: [Int32]
        var outputs: [Float]
    }

    /// Runs every filter over `activation` and returns each frame's winner (delay 0 and output
    /// 0 where every filter's output is 0).
    func winners(_ activation: [Float]) -> Winners {
        let count = activation.count
        var best = Winners(delays: [Int32](repeating: 0, count: count), outputs: [Float](repeating: 0, count: count))
        var output = [Float](repeating: 0, count: count)
        activation.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                best.outputs.withUnsafeMutableBufferPointer { bestOutput in
                    best.delays.withUnsafeMutableBufferPointer { bestDelay in
                        for delay in delays {
                            filter(x, delay: delay, into: y, outputs: bestOutput, delays: bestDelay)
                        }
                    }
                }
            }
        }
        return best
    }

    /// One comb filter's output, `y(t) = x(t) + alpha * y(t - delay)`, and where it exceeds the
    /// best output so far, `y` and `delay` become the frame's winner. With a delay of at least
    /// 8 frames, the 8 frames of a step depend only on frames before them, so they are
    /// computed and compared together (the same products, sums and comparisons as one by one,
    /// so the same values).
    private func filter(
        _ x: UnsafeBufferPointer<Float>, delay: Int, into y: UnsafeMutableBufferPointer<Float>,
        outputs: UnsafeMutableBufferPointer<Float>, delays: UnsafeMutableBufferPointer<Int32>
    ) {
        let count = x.count, alpha = self.alpha, winner = Int32(delay)
        func keep(_ frame: Int) {
            if y[frame] > outputs[frame] {
                outputs[frame] = y[frame]
                delays[frame] = winner
            }
        }
        let head = min(delay, count)
        for frame in 0..<head {
            y[frame] = x[frame]
            keep(frame)
        }
        var frame = head
        if delay >= 8 {
            let source = UnsafeRawPointer(x.baseAddress!), target = UnsafeMutableRawPointer(y.baseAddress!)
            let best = UnsafeMutableRawPointer(outputs.baseAddress!), winners = UnsafeMutableRawPointer(delays.baseAddress!)
            while frame + 8 <= count {
                let earlier = target.loadUnaligned(fromByteOffset: 4 * (frame - delay), as: SIMD8<Float>.self)
                let value = source.loadUnaligned(fromByteOffset: 4 * frame, as: SIMD8<Float>.self) + alpha * earlier
                target.storeBytes(of: value, toByteOffset: 4 * frame, as: SIMD8<Float>.self)
                let current = best.loadUnaligned(fromByteOffset: 4 * frame, as: SIMD8<Float>.self)
                let larger = value .> current
                if any(larger) {
                    best.storeBytes(of: current.replacing(with: value, where: larger), toByteOffset: 4 * frame, as: SIMD8<Float>.self)
                    let previous = winners.loadUnaligned(fromByteOffset: 4 * frame, as: SIMD8<Int32>.self)
                    // A float's lane mask is a vector of Int32: it selects the delays' lanes too.
                    winners.storeBytes(
                        of: previous.replacing(with: winner, where: larger), toByteOffset: 4 * frame, as: SIMD8<Int32>.self)
                }
                frame += 8
            }
        }
        while frame < count {
            y[frame] = x[frame] + alpha * y[frame - delay]
            keep(frame)
            frame += 1
        }
    }

    /// The histogram of the winners of `frames`: bin `delay - delays.lowerBound` sums the
    /// outputs of the frames that delay won.
    func histogram(_ winners: Winners, frames: Range<Int>) -> [Double] {
        var bins = [Double](repeating: 0, count: delays.count)
        for frame in frames where winners.delays[frame] > 0 {
            bins[Int(winners.delays[frame]) - delays.lowerBound] += Double(winners.outputs[frame])
        }
        return bins
    }
}

/// A tempo histogram over whole-frame delays, smoothed, read as peaks: the tempi it favours.
struct DelayHistogram {
    /// The smoothed bins; bin `i` is delay `firstDelay + i` frames.
    let bins: [Double]
    let firstDelay: Int
    let frameRate: Double

    /// `raw` smoothed by a Hann window of `smoothing` bins (odd; 1 leaves it as it is).
    init(_ raw: [Double], firstDelay: Int, frameRate: Double, smoothing: Int) {
        self.firstDelay = firstDelay
        self.frameRate = frameRate
        let half = max(smoothing, 1) / 2
        guard half > 0 else {
            bins = raw
            return
        }
        let taps = (0...(2 * half)).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0 + 1) / Double(2 * half + 2)) }
        bins = raw.indices.map { index in
            var sum = 0.0
            for (offset, tap) in taps.enumerated() {
                let source = index + offset - half
                if raw.indices.contains(source) { sum += tap * raw[source] }
            }
            return sum
        }
    }

    /// The smoothed histogram at a fractional delay (linear between bins, 0 outside them).
    func value(atDelay delay: Double) -> Double {
        let position = delay - Double(firstDelay)
        guard position >= 0, position <= Double(bins.count - 1) else { return 0 }
        let index = Int(position), fraction = position - Double(index)
        let next = min(index + 1, bins.count - 1)
        return bins[index] * (1 - fraction) + bins[next] * fraction
    }

    /// A peak: its tempo (from the parabola through the bin and its neighbours) and height.
    struct Peak {
        var bpm: Double
        var value: Double
    }

    /// The local maxima, highest first.
    var peaks: [Peak] {
        bins.indices.compactMap { index -> Peak? in
            let value = bins[index]
            guard value > 0 else { return nil }
            let left = index > 0 ? bins[index - 1] : 0
            let right = index + 1 < bins.count ? bins[index + 1] : 0
            guard value > left, value >= right else { return nil }
            let curvature = left - 2 * value + right
            let shift = curvature < 0 ? min(max(0.5 * (left - right) / curvature, -0.5), 0.5) : 0
            let delay = Double(firstDelay + index) + shift
            return Peak(bpm: 60 * frameRate / delay, value: value)
        }.sorted { $0.value > $1.value }
    }
}
