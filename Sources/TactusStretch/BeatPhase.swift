import Foundation
import TactusDSP

/// Where the beats of audio at a known tempo fall: the phase `φ` (seconds from the start) that
/// maximises the mean onset strength at `φ + k × period`, from the audio's own onset-strength
/// envelope (``OnsetStrengthAccumulator``, summed over its bands).
///
/// The envelope runs at 400 frames per second with 10 ms frames (each standing for the time of its
/// centre), and the best phase is refined between frames by a parabola, so a clear beat is placed within a few milliseconds. The same
/// measure on two songs rendered at the same sample rate has the same small bias on both, which
/// cancels when their beats are aligned.
enum BeatPhase {
    /// Envelope frames per second.
    static let frameRate = 400.0
    /// The best phase's mean onset strength must be at least this many times the mean over all
    /// phases for the audio to have a clear beat: click tracks and drum patterns are far above it,
    /// white noise and silence below it (BeatJoinTests).
    static let minimumClarity = 2.5

    private static let configuration = OnsetStrengthConfiguration(
        bandEdgesHz: [30, 150, 600, 2_500, 10_000], frameRate: frameRate, frameSeconds: 0.01)

    /// Seconds from the start of `samples` to its first beat at `bpm` (in `0..<60 / bpm`), or
    /// nil when the audio is shorter than four beats or has no clear beat at that tempo.
    static func first(in samples: ArraySlice<Float>, sampleRate: Int, bpm: Double) -> Double? {
        let period = frameRate * 60 / bpm
        let accumulator = OnsetStrengthAccumulator(
            sampleRate: Double(sampleRate), configuration: configuration, expectedSamples: samples.count)
        samples.withUnsafeBufferPointer { accumulator.consume($0) }
        let envelope = accumulator.finish()
        let count = envelope.frameCount
        guard period >= 2, Double(count) >= 4 * period else { return nil }
        var onset = [Double](repeating: 0, count: count)
        for band in envelope.bands {
            for (frame, value) in band.enumerated() { onset[frame] += Double(value) }
        }
        // Mean strength on the grid of each whole-frame phase, linearly interpolated between frames.
        let phases = Int(period.rounded(.up))
        let scores = (0..<phases).map { phase -> Double in
            var sum = 0.0, beats = 0.0
            var position = Double(phase)
            while position < Double(count - 1) {
                let frame = Int(position), fraction = position - Double(frame)
                sum += onset[frame] * (1 - fraction) + onset[frame + 1] * fraction
                beats += 1
                position += period
            }
            return beats > 0 ? sum / beats : 0
        }
        let mean = scores.reduce(0, +) / Double(phases)
        guard mean > 0, let best = scores.indices.max(by: { scores[$0] < scores[$1] }),
            scores[best] >= minimumClarity * mean
        else { return nil }
        // A parabola through the best phase and its neighbours (the phases wrap around the period).
        let before = scores[(best + phases - 1) % phases], after = scores[(best + 1) % phases]
        let curvature = before - 2 * scores[best] + after
        let offset = curvature < 0 ? min(max(0.5 * (before - after) / curvature, -0.5), 0.5) : 0
        // A frame stands for the time of its centre.
        let centre = configuration.frameSeconds / 2 * frameRate
        return (Double(best) + offset + centre + period).truncatingRemainder(dividingBy: period) / frameRate
    }
}
