/// The song's energy envelope, computed while the song streams in: the mean squared amplitude
/// of each block of 23.2 ms (1024 samples at 44.1 kHz, the block length scaled to the song's
/// sample rate so every song gets the same time resolution).
///
/// ```swift
/// let energy = BlockEnergyAccumulator(sampleRate: 48_000)
/// for block in decodedBlocks { block.withUnsafeBufferPointer { energy.consume($0) } }
/// let values = energy.finish()   // one Float per 23.2 ms; energy.hopSeconds apart
/// ```
public final class BlockEnergyAccumulator {
    /// Block length at 44.1 kHz (Patin's block, the envelope's resolution).
    public static let referenceBlockLength = 1024
    public static let referenceSampleRate = 44_100.0

    /// Samples per block at this sample rate.
    public let blockLength: Int
    /// Seconds between consecutive values (the block length in seconds).
    public let hopSeconds: Double

    private var values: [Float] = []
    private var sum = 0.0
    private var count = 0

    public init(sampleRate: Double) {
        precondition(sampleRate > 0, "a sample rate is positive")
        blockLength = max(1, Int((Double(Self.referenceBlockLength) * sampleRate / Self.referenceSampleRate).rounded()))
        hopSeconds = Double(blockLength) / sampleRate
    }

    /// Takes the next samples (any length).
    public func consume(_ samples: UnsafeBufferPointer<Float>) {
        var index = 0
        while index < samples.count {
            let take = min(blockLength - count, samples.count - index)
            sum += Double(SquaredSum.of(samples, index..<(index + take)))
            count += take
            index += take
            if count == blockLength {
                values.append(Float(sum / Double(blockLength)))
                sum = 0
                count = 0
            }
        }
    }

    /// The envelope: one value per complete block, plus the mean of a final partial block.
    public func finish() -> [Float] {
        var result = values
        if count > 0 {
            result.append(Float(sum / Double(count)))
        }
        return result
    }
}

/// Sums of squared samples, the inner loop of every energy computation.
public enum SquaredSum {
    /// The sum of the squares of `samples[range]`, accumulated in eight independent lanes so the
    /// compiler can vectorise it (a single running sum cannot be reordered).
    public static func of(_ samples: UnsafeBufferPointer<Float>, _ range: Range<Int>) -> Float {
        guard let base = samples.baseAddress, !range.isEmpty else { return 0 }
        var lanes = SIMD8<Float>(repeating: 0)
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let chunk = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD8<Float>.self)
            lanes += chunk * chunk
            index += 8
        }
        var total = lanes.sum()
        while index < range.upperBound {
            total += base[index] * base[index]
            index += 1
        }
        return total
    }
}
