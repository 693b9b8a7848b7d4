/// The power of each frequency band of a run of spectra, computed four spectra at a time, one
/// spectrum per vector lane: every spectrum's band sums come out exactly as
/// ``SquaredSum/of(_:_:)`` gives them one at a time (the same additions in the same order), but
/// the running sums of four spectra advance together instead of one after the other, and most
/// sums of a narrow band are nothing but a chain of additions that each waits on the last.
///
/// Create it once per analysis (it holds the four spectra it batches). Not thread-safe.
///
/// ```swift
/// let powers = BandPowers(bands: [0..<2, 2..<40])      // ranges of floats of each spectrum
/// if powers.add(spectrum) { powers.flush { frames in /* frames[k * 2 + band] */ } }
/// powers.flush { frames in /* the spectra left over */ }
/// ```
public final class BandPowers {
    /// Spectra held before their band powers are computed together.
    public static let batchSize = 4

    /// Each band's range of floats of a spectrum (interleaved (re, im) pairs for a complex one).
    public let bands: [Range<Int>]
    /// The floats of a spectrum that some band reads: `0..<span`.
    private let span: Int
    /// The held spectra, one after the other, `span` floats each.
    private var spectra: [Float]
    /// Their band powers, spectrum after spectrum.
    private var powers: [Float]
    /// Spectra held.
    public private(set) var count = 0

    public init(bands: [Range<Int>]) {
        precondition(bands.allSatisfy { $0.lowerBound >= 0 })
        self.bands = bands
        span = bands.map(\.upperBound).max() ?? 0
        spectra = [Float](repeating: 0, count: Self.batchSize * span)
        powers = [Float](repeating: 0, count: Self.batchSize * bands.count)
    }

    /// Holds `spectrum` (at least as long as the bands reach); true when the batch is full and
    /// must be flushed before the next.
    public func add(_ spectrum: UnsafeBufferPointer<Float>) -> Bool {
        precondition(count < Self.batchSize && spectrum.count >= span)
        if span > 0 {
            spectra.withUnsafeMutableBufferPointer { spectra in
                (spectra.baseAddress! + count * span).update(from: spectrum.baseAddress!, count: span)
            }
        }
        count += 1
        return count == Self.batchSize
    }

    /// Calls `body` with the band powers of the held spectra, spectrum after spectrum and band
    /// after band (`count * bands.count` values), and empties the batch. Does nothing when no
    /// spectrum is held.
    public func flush(_ body: (UnsafeBufferPointer<Float>) -> Void) {
        guard count > 0 else { return }
        let bandCount = bands.count, span = span, held = count
        spectra.withUnsafeBufferPointer { spectra in
            powers.withUnsafeMutableBufferPointer { powers in
                // Lanes beyond the held spectra read the previous batch's: computed, never stored.
                let first = spectra.baseAddress!, second = first + span, third = second + span, fourth = third + span
                func squared(_ index: Int) -> SIMD4<Float> {
                    let values = SIMD4(first[index], second[index], third[index], fourth[index])
                    return values * values
                }
                for (band, range) in bands.enumerated() {
                    // SquaredSum.of's sums, lane for lane: eight running sums over whole groups
                    // of eight floats, added up in order, then the rest one by one.
                    var index = range.lowerBound
                    var total = SIMD4<Float>(repeating: 0)
                    if index + 8 <= range.upperBound {
                        var l0 = SIMD4<Float>(repeating: 0), l1 = l0, l2 = l0, l3 = l0, l4 = l0, l5 = l0, l6 = l0, l7 = l0
                        while index + 8 <= range.upperBound {
                            l0 += squared(index)
                            l1 += squared(index + 1)
                            l2 += squared(index + 2)
                            l3 += squared(index + 3)
                            l4 += squared(index + 4)
                            l5 += squared(index + 5)
                            l6 += squared(index + 6)
                            l7 += squared(index + 7)
                            index += 8
                        }
                        total = l0 + l1 + l2 + l3 + l4 + l5 + l6 + l7
                    }
                    while index < range.upperBound {
                        total += squared(index)
                        index += 1
                    }
                    for spectrum in 0..<held { powers[spectrum * bandCount + band] = total[spectrum] }
                }
                body(UnsafeBufferPointer(rebasing: powers[0..<(held * bandCount)]))
            }
        }
        count = 0
    }
}
