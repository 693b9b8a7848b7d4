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
        var allFinite = true
        for sample in samples where !sample.isFinite {
            allFinite = false
            break
        }
        guard !allFinite else {
            body(samples)
            return
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples.lazy.map { $0.isFinite ? $0 : 0 })
        scratch.withUnsafeBufferPointer(body)
    }
}
