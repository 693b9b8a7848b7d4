/// Per-window autocorrelation of band envelopes through FFTW.
///
/// Keeps one ``FFTAutocorrelation`` and reuses it while the window length stays the same.
/// `spectralExponent` 2 gives the ordinary autocorrelation, 0.5 the generalised one (see
/// ``FFTAutocorrelation``). Not thread-safe: one per session.
public final class EnvelopeAutocorrelation {
    public let spectralExponent: Float
    private var engine: FFTAutocorrelation?
    private var scratch: [Float] = []

    public init(spectralExponent: Float = 2) {
        self.spectralExponent = spectralExponent
    }

    /// The autocorrelation of one envelope at lags `0..<values.count`, or `0...maxLag` when a
    /// reader needs no more (the transforms are then shorter). With `removeMean` (the default)
    /// the mean is subtracted first, so the result measures periodicity rather than loudness.
    ///
    /// Only the ordinary autocorrelation (`spectralExponent` 2) may be cut short: it is the
    /// same function at every length of transform, while a generalised one depends on it (|X|^k
    /// is taken of a spectrum sampled at that many points), so a shorter one would differ.
    public func of(_ values: ArraySlice<Float>, removeMean: Bool = true, maxLag: Int? = nil) -> [Float] {
        let length = values.count
        guard length > 1 else { return [Float](repeating: 0, count: max(length, 1)) }
        precondition(maxLag == nil || spectralExponent == 2, "only the ordinary autocorrelation is cut short")
        let lastLag = min(max(maxLag ?? length - 1, 0), length - 1)
        if engine?.length != length || engine?.maxLag != lastLag {
            engine = FFTAutocorrelation(length: length, maxLag: lastLag, spectralExponent: spectralExponent)
            scratch = [Float](repeating: 0, count: length)
        }
        let mean = removeMean ? values.reduce(0, +) / Float(length) : 0
        scratch.withUnsafeMutableBufferPointer { centred in
            values.withUnsafeBufferPointer { values in
                for index in 0..<length { centred[index] = values[index] - mean }
            }
        }
        let engine = self.engine!
        return scratch.withUnsafeBufferPointer { input in
            [Float](unsafeUninitializedCapacity: lastLag + 1) { output, initialised in
                engine.compute(input, into: output)
                initialised = lastLag + 1
            }
        }
    }

    /// Each band's autocorrelation (``of(_:removeMean:)``) for `window`.
    public func perBand(_ window: EnvelopeWindow, removeMean: Bool = true) -> [[Float]] {
        window.bands.map { of($0, removeMean: removeMean) }
    }

    /// `values` at a fractional lag, by linear interpolation; 0 beyond the last lag.
    public static func value(_ values: [Float], atLag lag: Double) -> Double {
        guard lag >= 0 else { return 0 }
        let lower = Int(lag)
        guard lower + 1 < values.count else { return lower == values.count - 1 && lag == Double(lower) ? Double(values[lower]) : 0 }
        let fraction = lag - Double(lower)
        return Double(values[lower]) * (1 - fraction) + Double(values[lower + 1]) * fraction
    }
}
