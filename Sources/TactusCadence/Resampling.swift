import Foundation

/// Sampling of recordings: the median interval, and resampling of irregular samples onto the
/// uniform analysis grid.
public enum Sampling {
    /// The median of the intervals between consecutive `times` (at least two).
    public static func medianInterval(_ times: [Double]) -> Double {
        precondition(times.count >= 2)
        var intervals = zip(times.dropFirst(), times).map { $0 - $1 }
        let middle = intervals.count / 2
        intervals.withUnsafeMutableBufferPointer { buffer in
            // Hoare's selection: the median without sorting everything.
            var low = 0, high = buffer.count - 1
            while low < high {
                let pivot = buffer[(low + high) / 2]
                var i = low, j = high
                while i <= j {
                    while buffer[i] < pivot { i += 1 }
                    while buffer[j] > pivot { j -= 1 }
                    if i <= j {
                        buffer.swapAt(i, j)
                        i += 1
                        j -= 1
                    }
                }
                if middle <= j { high = j } else if middle >= i { low = i } else { break }
            }
        }
        return intervals[middle]
    }

    /// `values`, sampled at the strictly increasing `times`, resampled at `rate` Hz from `times[0]`
    /// (as many samples as fit before the last time).
    ///
    /// Three steps: linear interpolation onto a uniform grid at the recording's own median rate
    /// (this evens out irregular sampling), a low-pass filter against aliasing (a 2nd-order
    /// Butterworth run forwards and backwards: zero phase, 4th-order attenuation, cutoff at
    /// `cutoff` Hz or 0.4 times the median rate, whichever is lower), then linear interpolation
    /// onto the grid at `rate`.
    public static func resample(times: [Double], values: [Double], rate: Double, cutoff: Double) -> [Double] {
        let sourceRate = 1 / medianInterval(times)
        var uniform = interpolate(times: times, values: values, rate: sourceRate)
        Biquad.butterworthLowPass(cutoff: min(cutoff, 0.4 * sourceRate), rate: sourceRate).filterZeroPhase(&uniform)
        let count = Int(((times[times.count - 1] - times[0]) * rate).rounded(.down)) + 1
        var output = [Double](repeating: 0, count: count)
        let step = sourceRate / rate
        for index in 0..<count {
            let position = Double(index) * step
            let left = min(Int(position), uniform.count - 1)
            let right = min(left + 1, uniform.count - 1)
            let fraction = position - Double(left)
            output[index] = uniform[left] + (uniform[right] - uniform[left]) * fraction
        }
        return output
    }

    /// Linear interpolation of (`times`, `values`) at `times[0] + k / rate`, k = 0, 1, ...
    static func interpolate(times: [Double], values: [Double], rate: Double) -> [Double] {
        let start = times[0]
        let count = Int(((times[times.count - 1] - start) * rate).rounded(.down)) + 1
        var output = [Double](repeating: 0, count: count)
        var segment = 0
        for index in 0..<count {
            let time = start + Double(index) / rate
            while segment < times.count - 2, times[segment + 1] < time { segment += 1 }
            let t0 = times[segment], t1 = times[min(segment + 1, times.count - 1)]
            let fraction = t1 > t0 ? min(max((time - t0) / (t1 - t0), 0), 1) : 0
            output[index] = values[segment] + (values[min(segment + 1, values.count - 1)] - values[segment]) * fraction
        }
        return output
    }
}

/// A second-order IIR section (transposed direct form II), designed by the bilinear transform
/// (R. Bristow-Johnson, "Cookbook formulae for audio EQ biquad filter coefficients").
struct Biquad {
    var b0: Double, b1: Double, b2: Double, a1: Double, a2: Double

    /// A Butterworth low-pass (Q = 1/√2) at `cutoff` Hz for samples at `rate` Hz.
    static func butterworthLowPass(cutoff: Double, rate: Double) -> Biquad {
        let omega = 2 * Double.pi * cutoff / rate
        let alpha = sin(omega) / (2 * 0.5.squareRoot())
        let cosine = cos(omega)
        let a0 = 1 + alpha
        return Biquad(
            b0: (1 - cosine) / 2 / a0, b1: (1 - cosine) / a0, b2: (1 - cosine) / 2 / a0,
            a1: -2 * cosine / a0, a2: (1 - alpha) / a0)
    }

    /// Filters `signal` forwards, then backwards (zero phase). Each pass starts in the steady
    /// state of its first sample held for ever, so the ends do not ring.
    func filterZeroPhase(_ signal: inout [Double]) {
        guard !signal.isEmpty else { return }
        signal.withUnsafeMutableBufferPointer { buffer in
            pass(buffer, indices: buffer.indices)
            pass(buffer, indices: buffer.indices.reversed())
        }
    }

    private func pass<Indices: Sequence<Int>>(_ buffer: UnsafeMutableBufferPointer<Double>, indices: Indices) {
        var first = true
        var z1 = 0.0, z2 = 0.0
        for index in indices {
            let input = buffer[index]
            if first {
                // The state of a constant input: the output equals it (unit gain at DC).
                z2 = (b2 - a2) * input
                z1 = (b1 - a1) * input + z2
                first = false
            }
            let output = b0 * input + z1
            z1 = b1 * input - a1 * output + z2
            z2 = b2 * input - a2 * output
            buffer[index] = output
        }
    }
}
