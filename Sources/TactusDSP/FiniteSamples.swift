/// Hands a detector only finite samples: NaN and infinite samples (a damaged float file can
/// hold them) become silence, so one bad sample cannot poison running sums, recursive filters
/// and FFTs for the rest of the song.
///
/// The common case costs one read of the block; a block is copied only when it has a
/// non-finite sample. Not thread-safe: one per session.
///
/// ```swift
/// finite.process(samples) { clean in envelope.consume(clean) }
/// ```
public struct FiniteSamples {
    private var scratch: [Float] = []

    public init() {}

    /// Calls `body` with `samples`, or with a copy whose non-finite samples are zero.
    public mutating func process(_ samples: UnsafeBufferPointer<Float>, _ body: (UnsafeBufferPointer<Float>) -> Void) {
        guard !Self.allFinite(samples) else {
            body(samples)
            return
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples.lazy.map { $0.isFinite ? $0 : 0 })
        scratch.withUnsafeBufferPointer(body)
    }

    /// Whether every sample is finite, in one vectorised pass: a finite sample times zero is
    /// zero, an infinite or NaN one is NaN, and a NaN stays in the running sum.
    static func allFinite(_ samples: UnsafeBufferPointer<Float>) -> Bool {
        guard let base = samples.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var lanes = SIMD16<Float>(repeating: 0)
        var index = 0
        while index + 16 <= samples.count {
            lanes += raw.loadUnaligned(fromByteOffset: 4 * index, as: SIMD16<Float>.self) * 0
            index += 16
        }
        var rest: Float = 0
        while index < samples.count {
            rest += base[index] * 0
            index += 1
        }
        return lanes == SIMD16(repeating: 0) && rest == 0
    }
}
