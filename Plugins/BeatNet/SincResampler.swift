import Foundation

/// Converts a stream of samples from one integer sample rate to another with a
/// Kaiser-windowed sinc kernel (band-limited interpolation), streamed, without delay: output
/// sample `m` is centred on input time `m * inputRate / outputRate`.
///
/// The rates' ratio reduced to `upsampling / downsampling` gives `upsampling` kernel phases,
/// computed once (at most 22,050 phases of a few dozen taps, a few megabytes for odd rates).
/// The cutoff is 95 % of the lower Nyquist frequency; each phase sums to 1, so a constant
/// stays constant.
final class SincResampler {
    let inputRate: Int
    let outputRate: Int
    private let upsampling: Int
    private let downsampling: Int
    /// Taps on each side of the centre.
    private let halfTaps: Int
    /// `phases[p * width + k]`: the weight of input `n0 - halfTaps + 1 + k` for an output whose
    /// position is `n0 + p / upsampling`.
    private let phases: [Float]
    private let width: Int
    /// Input samples from ``historyStart`` on.
    private var history: [Float] = []
    private var historyStart = 0
    private var received = 0
    /// The next output sample.
    private var next = 0
    private var output: [Float] = []

    init(inputRate: Int, outputRate: Int, zeroCrossings: Int = 8) {
        precondition(inputRate > 0 && outputRate > 0)
        self.inputRate = inputRate
        self.outputRate = outputRate
        let common = Self.gcd(inputRate, outputRate)
        upsampling = outputRate / common
        downsampling = inputRate / common
        let cutoff = 0.95 * min(1, Double(outputRate) / Double(inputRate))  // of the input's Nyquist
        halfTaps = Int((Double(zeroCrossings) / cutoff).rounded(.up))
        width = 2 * halfTaps
        let beta = 8.6
        func bessel0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-12 * sum {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            }
            return sum
        }
        let norm = bessel0(beta)
        var phases = [Float](repeating: 0, count: upsampling * width)
        for phase in 0..<upsampling {
            let fraction = Double(phase) / Double(upsampling)
            var weights = [Double](repeating: 0, count: width)
            for k in 0..<width {
                let x = Double(k - halfTaps + 1) - fraction  // input position minus output position
                let r = x / Double(halfTaps)
                guard abs(r) < 1 else { continue }
                let sinc = x == 0 ? 1 : sin(Double.pi * cutoff * x) / (Double.pi * cutoff * x)
                weights[k] = cutoff * sinc * bessel0(beta * (1 - r * r).squareRoot()) / norm
            }
            let total = weights.reduce(0, +)
            for k in 0..<width {
                phases[phase * width + k] = Float(weights[k] / total)
            }
        }
        self.phases = phases
        history.reserveCapacity(8192 + width)
    }

    /// Takes input samples and calls `body` with the output samples they complete.
    func consume(_ samples: UnsafeBufferPointer<Float>, _ body: (UnsafeBufferPointer<Float>) -> Void) {
        history.append(contentsOf: samples)
        received += samples.count
        produce(upTo: received, body)
    }

    /// Ends the input (zeros after it) and calls `body` with the remaining output samples:
    /// `ceil(inputCount * outputRate / inputRate)` in all.
    func finish(_ body: (UnsafeBufferPointer<Float>) -> Void) {
        let total = (received * upsampling + downsampling - 1) / downsampling
        history.append(contentsOf: repeatElement(0, count: halfTaps + 1))
        produce(upTo: received + halfTaps + 1, total: total, body)
    }

    private func produce(upTo available: Int, total: Int = .max, _ body: (UnsafeBufferPointer<Float>) -> Void) {
        // Locals in the loop: no class-property access (and its exclusivity checks) per tap.
        var produced = [Float]()
        swap(&produced, &output)
        produced.removeAll(keepingCapacity: true)
        let width = self.width, halfTaps = self.halfTaps, up = upsampling, down = downsampling, start = historyStart
        var next = self.next
        history.withUnsafeBufferPointer { input in
            phases.withUnsafeBufferPointer { weights in
                while next < total {
                    let position = next * down
                    let base = position / up
                    guard base + halfTaps < available else { break }  // the newest input it reads
                    let first = base - halfTaps + 1
                    let row = weights.baseAddress! + (position % up) * width
                    // Inputs before the history are before the song: zeros.
                    let skip = max(0, start - first)
                    let source = input.baseAddress! + (first + skip - start) - skip
                    var sum: Float = 0
                    for k in skip..<width {
                        sum += row[k] * source[k]
                    }
                    produced.append(sum)
                    next += 1
                }
            }
        }
        self.next = next
        swap(&produced, &output)
        output.withUnsafeBufferPointer(body)
        // Keep what the next outputs read.
        let keepFrom = (next * downsampling) / upsampling - halfTaps + 1
        let drop = keepFrom - historyStart
        if drop > 4096 {
            history.removeFirst(drop)
            historyStart += drop
        }
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
