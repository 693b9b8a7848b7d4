import TactusDSP

/// A window band's (generalised) autocorrelation read on a ``TempoVote``'s grid, the curve
/// the autocorrelation-based detectors vote with, and what it says of the beat candidates:
/// the lag of the strongest one and the lags all of them span (from the fastest to the
/// slowest), which a ``PeriodicityContrast`` measures against.
public struct GridAutocorrelation {
    /// The autocorrelation at each grid tempo's lag, divided by its value at lag 0.
    public let curve: [Double]
    /// The lag, in envelope frames, of the beat candidate where ``curve`` is highest.
    public let bestLag: Double
    /// The lags of the beat candidates, in envelope frames.
    public let candidateLags: ClosedRange<Double>

    /// Reads `band` of `window` through `autocorrelation` at the tempi of `grid`, the beat
    /// candidates being the grid indices `beatIndices`; nil when the band is silent (no power
    /// at lag 0) or there is no candidate.
    public init?(
        _ band: ArraySlice<Float>, of window: EnvelopeWindow, grid: TempoGrid, beatIndices: Range<Int>,
        autocorrelation: EnvelopeAutocorrelation
    ) {
        let r = autocorrelation.of(band)
        guard r[0] > 0 else { return nil }
        let zeroLag = Double(r[0])
        let curve = grid.bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / zeroLag }
        guard let best = beatIndices.max(by: { curve[$0] < curve[$1] }) else { return nil }
        self.curve = curve
        bestLag = window.lag(ofBPM: grid.bpms[best])
        candidateLags = window.lag(ofBPM: grid.bpms[beatIndices.upperBound - 1])...window.lag(ofBPM: grid.bpms[beatIndices.lowerBound])
    }
}
