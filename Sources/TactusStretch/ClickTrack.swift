import Foundation

/// A song with a click on each beat, to listen whether beats are where they should be: the
/// song at 0.7 of its level, a 25 ms decaying sine on each beat (1 kHz, 1.6 kHz on downbeats)
/// at half scale, written as a mono 16-bit WAV (in place once complete).
public enum ClickTrack {
    /// Writes `samples` (mono, at `sampleRate`) with clicks at `beats` (seconds; those also in
    /// `downbeats` sound higher) to `path`.
    public static func write(
        _ samples: [Float], sampleRate: Int, beats: [Double], downbeats: [Double] = [], to path: String, replacing: Bool = false,
        sparing inputs: [String] = []
    ) throws(StretchError) {
        var mixed = samples.map { 0.7 * $0 }
        let rate = Double(sampleRate)
        let length = Int(0.025 * rate)
        let bars = Set(downbeats)
        for beat in beats where beat >= 0 {
            let start = Int((beat * rate).rounded())
            let frequency = bars.contains(beat) ? 1_600.0 : 1_000.0
            for offset in 0..<length where start + offset < mixed.count {
                let time = Double(offset) / rate
                mixed[start + offset] += Float(0.5 * sin(2 * Double.pi * frequency * time) * exp(-time / 0.006))
            }
        }
        let output = try OutputFile(path: path, replacing: replacing, sparing: inputs)
        let writer = try WAVWriter(into: output, sampleRate: sampleRate)
        try writer.write(mixed[...])
        try writer.close()
        try output.place()
    }
}
