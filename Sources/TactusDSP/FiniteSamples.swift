import TactusDetector

/// Hands a detector only finite samples: NaN and infinite samples (a damaged float file can
/// hold them) become silence, so one bad sample cannot poison running sums, recursive filters
/// and FFTs for the rest of the song.
///
/// The common case costs one read of the block; a block is copied only when it has a
/// non-finite sample; a session whose samples are known to be finite
/// (``TactusDetector/SignalFormat/samplesAreFinite``) skips the read. Not thread-safe: one per
/// session.
///
/// ```swift
/// finite.process(samples) { clean in envelope.consume(clean) }
/// ```
public struct FiniteSamples {
    private var scratch: [Float] = []
    /// Whether the samples are finite already, as the signal's format says.
    private let trusted: Bool

    /// Checks every block, unless `format` says its samples are finite already.
    public init(format: SignalFormat? = nil) {
        trusted = format?.samplesAreFinite ?? false
    }

    /// Calls `body` with `samples`, or with a copy whose non-finite samples are zero.
    public mutating func process(_ samples: UnsafeBufferPointer<Float>, _ body: (UnsafeBufferPointer<Float>) -> Void) {
        guard !trusted, !Self.allFinite(samples) else {
            body(samples)
            return
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples.lazy.map { $0.isFinite ? $0 : 0 })
        scratch.withUnsafeBufferPointer(body)
    }

    /// Whether every sample is finite, read without a branch per sample: `x * 0` is zero for
    /// a finite `x` and NaN for an infinite or NaN one, and a NaN survives any sum. Four
    /// running sums let the compiler read four samples at a time (in release builds; scalar
    /// arithmetic keeps debug builds fast too, where generic SIMD types are not).
    static func allFinite(_ samples: UnsafeBufferPointer<Float>) -> Bool {
        guard let base = samples.baseAddress else { return true }
        var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
        var index = 0
        while index + 4 <= samples.count {
            sums.0 += base[index] * 0
            sums.1 += base[index + 1] * 0
            sums.2 += base[index + 2] * 0
            sums.3 += base[index + 3] * 0
            index += 4
        }
        while index < samples.count {
            sums.0 += base[index] * 0
            index += 1
        }
        return sums.0 + sums.1 + sums.2 + sums.3 == 0
    }
}
