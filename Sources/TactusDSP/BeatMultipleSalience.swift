/// A tempo salience that looks beyond one beat: how strongly an envelope repeats after one,
/// two, ... `multiples` beats.
///
/// The salience of a tempo is the mean of the window's normalised autocorrelation at the
/// first `multiples` multiples of its beat lag. A single lag cannot tell the beat from a
/// strong off-beat or a dotted rhythm (a clave repeats after 3/4 of a beat); requiring the
/// envelope to repeat after 2, 3 and 4 beats as well favours the metrical level whose
/// multiples are also periods (the beat, rather than eighths or dotted quarters), much as a
/// comb filter with a pulse on every beat does.
///
/// The autocorrelation is normalised by its value at lag 0, but never by less than
/// `minimumPower` per frame: an envelope that barely moves (a steady tone, whose analysis
/// frames ripple by a few parts in a million) is not periodic music, however regular its
/// ripple. Envelopes in log units (the shared onset envelope, log energy ratios) have a
/// power of about 0.04 to 1 per frame on music, 0.1 on white noise, and 10^-5 on a steady
/// tone.
public struct BeatMultipleSalience: Sendable {
    /// How many multiples of the beat lag are averaged (1: the plain autocorrelation).
    public let multiples: Int
    /// The smallest mean squared envelope value (mean removed) taken as real variation.
    public let minimumPower: Double

    public init(multiples: Int, minimumPower: Double = 1e-3) {
        precondition(multiples >= 1 && minimumPower >= 0)
        self.multiples = multiples
        self.minimumPower = minimumPower
    }

    /// The salience of each tempo in `bpms` for `window`, from the window's autocorrelation
    /// `r` (lags `0..<r.count`, as ``EnvelopeAutocorrelation/summed(_:removeMean:weights:)``
    /// returns it). 0 for every tempo when the window has no variation.
    public func callAsFunction(_ r: [Float], window: EnvelopeWindow, bpms: [Double]) -> [Double] {
        guard let zeroLag = r.first, zeroLag > 0 else { return bpms.map { _ in 0 } }
        let power = max(Double(zeroLag), minimumPower * Double(r.count))
        let scale = 1 / (power * Double(multiples))
        return bpms.map { bpm in
            let lag = window.lag(ofBPM: bpm)
            var sum = 0.0
            for multiple in 1...multiples {
                sum += EnvelopeAutocorrelation.value(r, atLag: Double(multiple) * lag)
            }
            return sum * scale
        }
    }
}
