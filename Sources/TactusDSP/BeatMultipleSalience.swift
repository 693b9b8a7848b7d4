/// A tempo salience that looks beyond one beat: how strongly an envelope repeats after one,
/// two, ... `multiples` beats.
///
/// The salience of a tempo is the mean of the window's normalised autocorrelation at the
/// first `multiples` multiples of its beat lag, which is (up to scale) the output energy of a
/// pulse comb of `multiples + 1` pulses at that tempo. A single lag cannot tell the beat from
/// a strong off-beat or a dotted rhythm (a clave repeats after 3/4 of a beat); requiring the
/// envelope to repeat at 2, 3 and 4 beats as well favours the metrical level whose multiples
/// are also periods: the beat, rather than eighths or dotted quarters.
public struct BeatMultipleSalience: Sendable {
    /// How many multiples of the beat lag are averaged (1: the plain autocorrelation).
    public let multiples: Int

    public init(multiples: Int) {
        precondition(multiples >= 1)
        self.multiples = multiples
    }

    /// The salience of each tempo in `bpms` for `window`, from the window's autocorrelation
    /// `r` (lags `0..<r.count`, as ``EnvelopeAutocorrelation/summed(_:removeMean:weights:)``
    /// returns it). 0 for every tempo when the window has no variation.
    public func callAsFunction(_ r: [Float], window: EnvelopeWindow, bpms: [Double]) -> [Double] {
        guard let zeroLag = r.first, zeroLag > 0 else { return bpms.map { _ in 0 } }
        let scale = 1 / (Double(zeroLag) * Double(multiples))
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
