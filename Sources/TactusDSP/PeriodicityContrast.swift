/// How clearly an envelope repeats at one lag, on a 0...1 scale that noise and steady tones
/// do not reach: the ordinary normalised autocorrelation at that lag minus its mean over a
/// range of lags (the level any lag gets from the envelope's smoothness), scaled down when the
/// envelope barely moves.
///
/// A random envelope correlates about equally at every lag of the range, so its contrast is
/// near 0 wherever its best peak falls; a click track correlates at its period and not
/// between. An envelope whose power (variance) is under `minimumPower` per frame, such as the
/// ripple of a steady tone in log units (about 10^-5, against 0.01 to 1 for music), counts in
/// proportion to its power.
public struct PeriodicityContrast {
    private let centred: [Double]
    private let energy: Double
    private let floor: Double
    private let powerScale: Double

    /// Prepares `values` (mean removed) with the lag range `lags` (in frames, fractional).
    public init(_ values: ArraySlice<Float>, lags: ClosedRange<Double>, minimumPower: Double = 1e-3) {
        let mean = values.isEmpty ? 0 : Double(values.reduce(0, +)) / Double(values.count)
        centred = values.map { Double($0) - mean }
        energy = centred.reduce(0) { $0 + $1 * $1 }
        let power = centred.isEmpty ? 0 : energy / Double(centred.count)
        powerScale = minimumPower > 0 ? min(1, power / minimumPower) : 1
        var sum = 0.0, count = 0
        let first = max(1, Int(lags.lowerBound.rounded(.down))), last = min(centred.count - 1, Int(lags.upperBound.rounded(.up)))
        if first <= last {
            for lag in first...last {
                sum += Self.correlation(centred, energy: energy, atLag: Double(lag))
                count += 1
            }
        }
        floor = count > 0 ? sum / Double(count) : 0
    }

    /// The contrast at `lag` frames (fractional), in 0...1.
    public func strength(atLag lag: Double) -> Double {
        let value = Self.correlation(centred, energy: energy, atLag: lag) - max(floor, 0)
        return min(max(value * powerScale, 0), 1)
    }

    private static func correlation(_ centred: [Double], energy: Double, atLag lag: Double) -> Double {
        guard energy > 0, lag >= 0 else { return 0 }
        let whole = Int(lag), fraction = lag - Double(whole)
        guard whole + 1 < centred.count else { return 0 }
        var atWhole = 0.0, atNext = 0.0
        for index in 0..<(centred.count - whole) {
            atWhole += centred[index] * centred[index + whole]
            if index + whole + 1 < centred.count { atNext += centred[index] * centred[index + whole + 1] }
        }
        return ((1 - fraction) * atWhole + fraction * atNext) / energy
    }
}
