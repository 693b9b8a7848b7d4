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
    /// The samples of a block begun in an earlier call: each block is summed whole, from its
    /// start, so the envelope does not depend on how the song was cut into calls.
    private var partialBlock: [Float] = []

    public init(sampleRate: Double) {
        precondition(sampleRate > 0, "a sample rate is positive")
        blockLength = max(1, Int((Double(Self.referenceBlockLength) * sampleRate / Self.referenceSampleRate).rounded()))
        hopSeconds = Double(blockLength) / sampleRate
    }

    /// Takes the next samples (any length).
    public func consume(_ samples: UnsafeBufferPointer<Float>) {
        var index = 0
        if !partialBlock.isEmpty {
            index = min(blockLength - partialBlock.count, samples.count)
            partialBlock.append(contentsOf: UnsafeBufferPointer(rebasing: samples[0..<index]))
            guard partialBlock.count == blockLength else { return }
            partialBlock.withUnsafeBufferPointer { values.append(Self.meanSquare($0, 0..<blockLength)) }
            partialBlock.removeAll(keepingCapacity: true)
        }
        while index + blockLength <= samples.count {
            values.append(Self.meanSquare(samples, index..<(index + blockLength)))
            index += blockLength
        }
        partialBlock.append(contentsOf: UnsafeBufferPointer(rebasing: samples[index...]))
    }

    /// The envelope: one value per complete block, plus the mean of a final partial block.
    public func finish() -> [Float] {
        var result = values
        if !partialBlock.isEmpty {
            partialBlock.withUnsafeBufferPointer { result.append(Self.meanSquare($0, 0..<$0.count)) }
        }
        return result
    }

    private static func meanSquare(_ samples: UnsafeBufferPointer<Float>, _ range: Range<Int>) -> Float {
        Float(Double(SquaredSum.of(samples, range)) / Double(range.count))
    }
}

/// Sums of squared samples, the inner loop of every energy computation.
public enum SquaredSum {
    /// The sum of the squares of `samples[range]`, accumulated in eight independent lanes so the
    /// compiler can vectorise it (a single running sum cannot be reordered). A range shorter than
    /// eight skips the sum of the lanes (all zero), a chain of eight additions that was most of
    /// the time of a narrow spectral band.
    @inline(__always)
    public static func of(_ samples: UnsafeBufferPointer<Float>, _ range: Range<Int>) -> Float {
        guard let base = samples.baseAddress, !range.isEmpty else { return 0 }
        var lanes = SIMD8<Float>(repeating: 0)
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let chunk = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD8<Float>.self)
            lanes += chunk * chunk
            index += 8
        }
        // The lanes added up in order (the order ``BandPowers`` follows too).
        var total = index > range.lowerBound
            ? lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7] : 0
        while index < range.upperBound {
            total += base[index] * base[index]
            index += 1
        }
        return total
    }
}
