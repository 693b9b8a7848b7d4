import Foundation

/// madmom's `LogarithmicFilterbank` as BeatNet builds it (24 bands per octave from 30 Hz to
/// 17 kHz, tuned to A4 = 440 Hz, area-normalised, overlapping triangular filters on unique
/// FFT bins), stored sparsely: each band is a start bin and its weights.
///
/// The construction follows madmom 0.16.1 step by step (`log_frequencies`,
/// `frequencies2bins(unique_bins=True)`, `TriangularFilter.band_bins(overlap=True)`,
/// `Filter(norm=True)`, `Filterbank.from_filters`), including its bin frequencies, which are
/// those of an FFT of `2 * binCount` points (madmom's `fft_frequencies`) even when the frame
/// is one sample longer.
struct LogFilterbank {
    /// One triangular filter: weights for the bins `start..<(start + weights.count)`.
    struct Band {
        var start: Int
        var weights: [Float]
    }

    let bands: [Band]
    /// Number of FFT bins the filters read (the input length of ``apply(_:into:)``).
    let binCount: Int
    /// The bands' weights end to end, and where each band's are in it: what ``apply(_:into:)``
    /// reads, without a separate array per band.
    private let packedWeights: [Float]
    private let spans: [(start: Int, offset: Int, count: Int)]

    init(binCount: Int, sampleRate: Double, bandsPerOctave: Int = 24, minHz: Double = 30, maxHz: Double = 17_000, referenceHz: Double = 440) {
        self.binCount = binCount
        let binHz = (0..<binCount).map { Double($0) * sampleRate / Double(2 * binCount) }
        let centres = Self.logFrequencies(bandsPerOctave: bandsPerOctave, minHz: minHz, maxHz: maxHz, referenceHz: referenceHz)
        let bins = Self.nearestUniqueBins(centres, binHz: binHz)
        var bands: [Band] = []
        var index = 0
        while index + 3 <= bins.count {
            var (start, centre, stop) = (bins[index], bins[index + 1], bins[index + 2])
            if stop - start < 2 {
                centre = start
                stop = start + 1
            }
            bands.append(Band(start: start, weights: Self.triangle(rising: centre - start, falling: stop - centre)))
            index += 1
        }
        // from_filters keeps the larger value where filters overlap within one band; each band
        // has one filter here, so truncating at the last bin is all that is left.
        self.bands = bands.map { band in
            Band(start: band.start, weights: Array(band.weights.prefix(max(0, binCount - band.start))))
        }
        packedWeights = self.bands.flatMap(\.weights)
        var offset = 0
        spans = self.bands.map { band in
            defer { offset += band.weights.count }
            return (band.start, offset, band.weights.count)
        }
    }

    /// madmom's `log_frequencies`: `referenceHz * 2^(k / bandsPerOctave)` within `minHz...maxHz`.
    static func logFrequencies(bandsPerOctave: Int, minHz: Double, maxHz: Double, referenceHz: Double) -> [Double] {
        let perOctave = Double(bandsPerOctave)
        let left = (log2(minHz / referenceHz) * perOctave).rounded(.down)
        let right = (log2(maxHz / referenceHz) * perOctave).rounded(.up)
        return stride(from: left, to: right, by: 1)
            .map { referenceHz * pow(2, $0 / perOctave) }
            .filter { $0 >= minHz && $0 <= maxHz }
    }

    /// madmom's `frequencies2bins(unique_bins=True)`: the nearest bin of each frequency (ties
    /// go up), never bin 0, each bin once, ascending.
    static func nearestUniqueBins(_ frequencies: [Double], binHz: [Double]) -> [Int] {
        var bins: [Int] = []
        for frequency in frequencies {
            var index = binHz.firstIndex { $0 >= frequency } ?? binHz.count
            index = min(max(index, 1), binHz.count - 1)
            if frequency - binHz[index - 1] < binHz[index] - frequency {
                index -= 1
            }
            if bins.last != index {
                bins.append(index)
            }
        }
        return Array(Set(bins)).sorted()
    }

    /// A triangle rising over `rising` bins from 0 and falling over `falling` bins from 1
    /// (numpy's `linspace(..., endpoint=False)`), divided by its sum in single precision.
    static func triangle(rising: Int, falling: Int) -> [Float] {
        let up = (0..<rising).map { Float(Double($0) / Double(rising)) }
        let down = (0..<falling).map { Float(1 - Double($0) / Double(falling)) }
        let values = up + down
        let sum = values.reduce(0, +)
        return values.map { $0 / sum }
    }

    /// Writes each band's weighted sum of `magnitudes` (``binCount`` values) into `output`.
    func apply(_ magnitudes: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        packedWeights.withUnsafeBufferPointer { weights in
            spans.withUnsafeBufferPointer { spans in
                for index in spans.indices {
                    let span = spans[index]
                    let w = weights.baseAddress! + span.offset, m = magnitudes + span.start
                    var sum: Float = 0
                    for offset in 0..<span.count {
                        sum += w[offset] * m[offset]
                    }
                    output[index] = sum
                }
            }
        }
    }
}
