import Foundation

/// A slow automatic gain: scales the signal so its running RMS level is `targetRMS`.
///
/// The onset envelope compresses each band as log(1 + c m): logarithmic, so independent of
/// the level, only while c m is well above 1. A song mastered 60 dB quieter than usual (or an
/// MP3 of a badly scaled source) would fall into the linear part and give a different
/// envelope. Normalising the level first makes the envelope, and the tempo, the same at any
/// level. The time constant is long (seconds), so onsets, which last milliseconds, keep their
/// shape. The level is measured, and the gain updated, every 5 ms.
struct LevelNormaliser {
    let targetRMS: Double
    private let stepLength: Int
    private let coefficient: Double
    private var meanSquare = 0.0
    private var gain: Float = 1
    private var stepEnergy: Float = 0
    private var stepCount = 0
    private var started = false

    init(sampleRate: Double, timeConstantSeconds: Double = 5, targetRMS: Double = 0.1) {
        self.targetRMS = targetRMS
        stepLength = max(1, Int(sampleRate / 200))
        coefficient = 1 - exp(-Double(stepLength) / (timeConstantSeconds * sampleRate))
    }

    /// Writes `input` scaled into `output` (at least as long).
    mutating func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        var index = 0
        while index < input.count {
            let end = min(index + stepLength - stepCount, input.count)
            var energy: Float = 0
            let gain = self.gain
            for position in index..<end {
                let sample = input[position]
                energy += sample * sample
                output[position] = sample * gain
            }
            stepEnergy += energy
            stepCount += end - index
            index = end
            if stepCount == stepLength {
                endStep()
            }
        }
    }

    private mutating func endStep() {
        let stepMeanSquare = Double(stepEnergy) / Double(stepLength)
        stepEnergy = 0
        stepCount = 0
        if !started {
            // Start from the level of the first audible step rather than from zero.
            guard stepMeanSquare > 0 else { return }
            meanSquare = stepMeanSquare
            started = true
        } else {
            meanSquare += coefficient * (stepMeanSquare - meanSquare)
        }
        if meanSquare > 0 {
            gain = Float(targetRMS / meanSquare.squareRoot())
        }
    }
}
