import Foundation
import TactusDSP
import TactusDetector
import TactusVote

/// The settings of a BeatNet analysis, read from a resolved parameter set.
struct BeatNetSettings {
    var levelDBFS: Double
    var spectralExponent: Float
    var vote: TempoVoteConfiguration

    init(_ parameters: ParameterSet) {
        levelDBFS = parameters.number("level_dbfs")
        spectralExponent = Float(parameters.number("spectral_exponent"))
        vote = TempoVoteConfiguration(parameters)
    }
}

/// One song through BeatNet: resampling to 22,050 Hz, the filtered spectrogram while the song
/// streams in, then at the end the level normalisation, the features and the network, and the
/// windowed vote on the beat activation.
///
/// The state that grows with the song is the filtered spectrogram (136 values per 20 ms frame,
/// 27 kB per second of audio) and the activation.
final class BeatNetSession: DetectorSession {
    static let frameRate = Double(BeatNetDetector.sampleRate) / Double(FilteredSpectrogram.hop)

    private let settings: BeatNetSettings
    private let sampleRate: Double
    private var finite = FiniteSamples()
    private let resampler: SincResampler?
    private let spectrogram: FilteredSpectrogram
    private var magnitudes: [Float] = []
    /// Sums of squared input samples before the start of each 20 ms frame (at the input rate).
    private var energyPrefix: [Double] = [0]
    private var energy = 0.0
    private var sampleCount = 0

    init(settings: BeatNetSettings, sampleRate: Double, expectedFrames: Int?) {
        self.settings = settings
        self.sampleRate = sampleRate
        let inputRate = Int(sampleRate.rounded())
        resampler = inputRate == BeatNetDetector.sampleRate
            ? nil : SincResampler(inputRate: inputRate, outputRate: BeatNetDetector.sampleRate)
        spectrogram = FilteredSpectrogram(sampleRate: Double(BeatNetDetector.sampleRate))
        if let expectedFrames {
            let frames = Int(Double(expectedFrames) / sampleRate * Self.frameRate) + 2
            magnitudes.reserveCapacity(min(frames, 1 << 20) * spectrogram.bandCount)
            energyPrefix.reserveCapacity(min(frames, 1 << 20) + 2)
        }
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { clean in
            accumulateEnergy(clean)
            if let resampler {
                resampler.consume(clean) { resampled in spectrogram.consume(resampled, frame: keep) }
            } else {
                spectrogram.consume(clean, frame: keep)
            }
        }
    }

    private func keep(_ bands: UnsafeBufferPointer<Float>) {
        magnitudes.append(contentsOf: bands)
    }

    private func frameStart(_ frame: Int) -> Int {
        Int((Double(frame) * sampleRate / Self.frameRate).rounded())
    }

    private func accumulateEnergy(_ samples: UnsafeBufferPointer<Float>) {
        var index = 0
        while index < samples.count {
            let boundary = frameStart(energyPrefix.count)
            let stop = min(samples.count, index + max(boundary - sampleCount, 0))
            for sample in samples[index..<stop] {
                energy += Double(sample) * Double(sample)
            }
            sampleCount += stop - index
            index = stop
            if sampleCount == boundary {
                energyPrefix.append(energy)
            }
        }
    }

    func finish() -> DetectorOutput {
        if let resampler {
            resampler.finish { resampled in spectrogram.consume(resampled, frame: keep) }
        }
        spectrogram.finish(frame: keep)
        let bands = spectrogram.bandCount
        let frames = magnitudes.count / bands
        let gain = levelGain()
        let activation = magnitudes.withUnsafeBufferPointer {
            BeatNetActivation(bandCount: bands).activation(magnitudes: $0, gain: gain)
        }
        let beat = (0..<frames).map { activation[3 * $0] + activation[3 * $0 + 1] }
        let envelope = OnsetStrengthEnvelope(
            frameRate: Self.frameRate, sampleRate: sampleRate, bands: [beat], sampleCount: sampleCount,
            energyPrefix: prefix(frames: frames))
        return decide(envelope)
    }

    /// The gain that brings the song's RMS level to `level_dbfs` (1 for silence).
    private func levelGain() -> Float {
        guard sampleCount > 0, energy > 0 else { return 1 }
        let rms = (energy / Double(sampleCount)).squareRoot()
        let target = pow(10, settings.levelDBFS / 20)
        return Float(min(max(target / rms, 1e-3), 1e6))
    }

    /// ``energyPrefix`` with one entry per frame plus the total, as the envelope wants it.
    private func prefix(frames: Int) -> [Double] {
        var entries = Array(energyPrefix.prefix(frames))
        while entries.count < frames {
            entries.append(energy)
        }
        entries.append(energy)
        return entries
    }

    /// The windowed vote on the beat activation: each window's generalised autocorrelation at
    /// the grid's tempi, and its periodicity contrast as the window's strength.
    private func decide(_ envelope: OnsetStrengthEnvelope) -> DetectorOutput {
        let autocorrelation = EnvelopeAutocorrelation(spectralExponent: settings.spectralExponent)
        let ordinary = EnvelopeAutocorrelation()
        let vote = TempoVote(configuration: settings.vote)
        let beatIndices = vote.grid.indices(within: settings.vote.minBPM...settings.vote.maxBPM)
        return vote.decide(envelope) { window, grid in
            let r = autocorrelation.of(window.bands[0])
            guard r[0] > 0 else { return .none(count: grid.count) }
            let zeroLag = Double(r[0])
            let curve = grid.bpms.map { EnvelopeAutocorrelation.value(r, atLag: window.lag(ofBPM: $0)) / zeroLag }
            guard let best = beatIndices.max(by: { curve[$0] < curve[$1] }) else { return .none(count: grid.count) }
            let lags = window.lag(ofBPM: grid.bpms[beatIndices.upperBound - 1])...window.lag(ofBPM: grid.bpms[beatIndices.lowerBound])
            let contrast = PeriodicityContrast(autocorrelation: ordinary.of(window.bands[0]), frames: window.frameCount, lags: lags)
            return PeriodicityEvidence(strength: contrast.strength(atLag: window.lag(ofBPM: grid.bpms[best])), curve: curve)
        }
    }
}
