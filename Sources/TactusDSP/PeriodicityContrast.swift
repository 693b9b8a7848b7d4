/// How clearly an envelope repeats at one lag, on a 0...1 scale that noise and steady tones
/// do not reach: the envelope's normalised autocorrelation at that lag minus its mean over a
/// range of lags (the level any lag gets from the envelope's smoothness or density), scaled
/// down when the envelope barely moves.
///
/// A random envelope correlates about equally at every lag of the range, so its contrast is
/// near 0 wherever its best peak falls; a click track correlates at its period and not
/// between. An envelope whose power (variance per frame) is under `minimumPower`, such as the
/// ripple of a steady tone in log units (about 10^-5, against 0.01 to 1 for music), counts in
/// proportion to its power.
public struct PeriodicityContrast {
    private let autocorrelation: [Float]
    private let floor: Double
    private let scale: Double

    /// The contrast of `envelope` over `lags`, the range of lags (in frames) the floor is the
    /// mean over and ``strength(atLag:)`` is read within: its mean-removed autocorrelation is
    /// computed through `autocorrelation` up to the range's last lag, all a contrast reads.
    public init(
        of envelope: ArraySlice<Float>, lags: ClosedRange<Double>, autocorrelation engine: EnvelopeAutocorrelation,
        minimumPower: Double = 1e-3
    ) {
        let frames = envelope.count
        let autocorrelation = engine.of(envelope, maxLag: Int(lags.upperBound.rounded(.up)) + 1)
        self.autocorrelation = autocorrelation
        let zeroLag = Double(autocorrelation.first ?? 0)
        guard zeroLag > 0, frames > 0 else {
            floor = 0
            scale = 0
            return
        }
        let power = zeroLag / Double(frames)
        scale = (minimumPower > 0 ? min(1, power / minimumPower) : 1) / zeroLag
        let first = max(1, Int(lags.lowerBound.rounded(.down)))
        let last = min(autocorrelation.count - 1, Int(lags.upperBound.rounded(.up)))
        guard first <= last else {
            floor = 0
            return
        }
        floor = max(autocorrelation[first...last].reduce(0.0) { $0 + Double($1) } / Double(last - first + 1), 0)
    }

    /// The contrast at `lag` frames (fractional, within the `lags` it was made for), in 0...1.
    public func strength(atLag lag: Double) -> Double {
        let value = (EnvelopeAutocorrelation.value(autocorrelation, atLag: lag) - floor) * scale
        return min(max(value, 0), 1)
    }
}
