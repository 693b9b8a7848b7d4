import Foundation

/// A constant beat grid for a song whose beats no detector tracked: every `60 / bpm` s from
/// the phase where the song's onset envelope is strongest (``BeatPhase``), to the song's end.
public enum ConstantBeatGrid {
    /// The beat times of `samples` (mono, at `sampleRate`) at `bpm`, or nil when the song has
    /// no clear beat at that tempo (``BeatPhase/first(in:sampleRate:bpm:)``).
    public static func beats(in samples: [Float], sampleRate: Int, bpm: Double) -> [Double]? {
        guard bpm > 0, sampleRate > 0, let first = BeatPhase.first(in: samples[...], sampleRate: sampleRate, bpm: bpm) else {
            return nil
        }
        let duration = Double(samples.count) / Double(sampleRate)
        let period = 60 / bpm
        return stride(from: first, to: duration, by: period).map { $0 }
    }
}
