import Foundation
import TactusDSP
import TactusDetector
import TactusVote

/// The settings of the SoundTouch-style detector, read from a resolved parameter set.
struct DecimatedEnvelopeSettings {
    var decimatedRate: Double
    var cutoffFactor: Double
    var averageSeconds: Double
    var smoothingSeconds: Double
    var windowSeconds: Double
    var hopSeconds: Double
    var bpmRange: ClosedRange<Double>

    init(_ parameters: ParameterSet) {
        decimatedRate = parameters.number("decimated_hz")
        cutoffFactor = parameters.number("cutoff_factor")
        averageSeconds = parameters.number("average_s")
        smoothingSeconds = parameters.number("smoothing_ms") / 1000
        windowSeconds = parameters.number("window_s")
        hopSeconds = parameters.number("hop_s")
        bpmRange = parameters.number("min_bpm")...parameters.number("max_bpm")
    }
}

/// The `classic` preset: SoundTouch's BPM detector as seed 002 section 4.5 describes it.
///
/// 1. The samples are decimated to about `decimatedRate` by averaging the magnitudes of
///    groups of samples. (Averaging the raw samples, as SoundTouch does, keeps only what lies
///    below a few hundred hertz: a 2 ms average cancels a 1 kHz click completely, and the
///    kick drum is left to carry the beat. Rectifying first keeps every instrument's attack.)
/// 2. The decimated signal is enveloped: its magnitude is dropped (set to 0) where it is
///    under `cutoffFactor` times a sliding RMS average (time constant `averageSeconds`),
///    leaving the peaks, and smoothed by a one-pole filter (`smoothingSeconds`).
/// 3. After the whole track, the envelope is autocorrelated through the FFT (mean removed).
/// 4. The highest autocorrelation peak in the lag range of `bpmRange`, refined by parabolic
///    interpolation, gives the tempo.
///
/// The envelope at ~500 Hz is the only state that grows with the song (2 MB for 20 minutes).
final class DecimatedEnvelopeSession: DetectorSession {
    private var finite = FiniteSamples()
    private let settings: DecimatedEnvelopeSettings
    private let sampleRate: Double
    private let decimation: Int
    private let envelopeRate: Double
    private let averageDecay: Double
    private let smoothingDecay: Double
    private var groupMagnitude: Float = 0
    private var groupEnergy: Float = 0
    private var groupCount = 0
    private var meanSquare = 0.0
    private var smoothed = 0.0
    private var envelope: [Float] = []
    /// Reused while the segment length stays the same (every window has the same length).
    private var engine: FFTAutocorrelation?
    /// Mean squared sample of each decimation group, for the per-window energies.
    private var groupEnergies: [Float] = []

    init(settings: DecimatedEnvelopeSettings, sampleRate: Double) {
        self.settings = settings
        self.sampleRate = sampleRate
        decimation = max(1, Int((sampleRate / settings.decimatedRate).rounded()))
        envelopeRate = sampleRate / Double(decimation)
        averageDecay = exp(-1 / (settings.averageSeconds * envelopeRate))
        smoothingDecay = settings.smoothingSeconds > 0 ? exp(-1 / (settings.smoothingSeconds * envelopeRate)) : 0
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { accumulate($0) }
    }

    private func accumulate(_ samples: UnsafeBufferPointer<Float>) {
        var magnitude = groupMagnitude, energy = groupEnergy, count = groupCount
        for sample in samples {
            magnitude += abs(sample)
            energy += sample * sample
            count += 1
            if count == decimation {
                append(decimated: Double(magnitude) / Double(decimation))
                groupEnergies.append(energy / Float(decimation))
                magnitude = 0
                energy = 0
                count = 0
            }
        }
        groupMagnitude = magnitude
        groupEnergy = energy
        groupCount = count
    }

    /// Envelopes one decimated sample.
    private func append(decimated value: Double) {
        var magnitude = abs(value)
        meanSquare = averageDecay * meanSquare + (1 - averageDecay) * magnitude * magnitude
        if magnitude < settings.cutoffFactor * meanSquare.squareRoot() {
            magnitude = 0
        }
        smoothed = smoothingDecay * smoothed + (1 - smoothingDecay) * magnitude
        envelope.append(Float(smoothed))
    }

    func finish() -> DetectorOutput {
        let windows = windowRecords()
        if groupEnergies.isEmpty {
            return DetectorOutput(bpm: nil, reason: "too short", confidence: 0, candidates: [], windows: windows)
        }
        if groupEnergies.allSatisfy({ $0 == 0 }) {
            return DetectorOutput(bpm: nil, reason: "silence", confidence: 0, candidates: [], windows: windows)
        }
        let peaks = tempoPeaks(envelope[...])
        guard let best = peaks.first else {
            return DetectorOutput(bpm: nil, reason: "no periodicity", confidence: 0, candidates: [], windows: windows)
        }
        var candidates: [TempoCandidate] = []
        for peak in peaks where candidates.count < 5 {
            // One candidate per tempo: ripples within 4 % of a higher peak are not tempi of their own.
            if !candidates.contains(where: { TempoRelation.matches(peak.bpm, $0.bpm) }) {
                candidates.append(TempoCandidate(bpm: peak.bpm, strength: peak.value / best.value))
            }
        }
        return DetectorOutput(
            bpm: best.bpm, confidence: min(max(best.value, 0), 1), candidates: candidates, windows: windows)
    }

    /// The autocorrelation peaks of `segment` in the tempo range, highest first, as tempi
    /// with their normalised autocorrelation (1 at lag 0).
    private func tempoPeaks(_ segment: ArraySlice<Float>) -> [(bpm: Double, value: Double)] {
        let shortest = Int((60 * envelopeRate / settings.bpmRange.upperBound).rounded(.down))
        let longest = Int((60 * envelopeRate / settings.bpmRange.lowerBound).rounded(.up))
        guard segment.count > longest + 1, shortest >= 1 else { return [] }
        let mean = segment.reduce(0, +) / Float(segment.count)
        let centred = segment.map { $0 - mean }
        if engine?.length != centred.count {
            engine = FFTAutocorrelation(length: centred.count, maxLag: longest + 1)
        }
        let r = engine!.compute(centred)
        guard r[0] > 0 else { return [] }
        return Peaks.find(in: r, range: shortest...longest)
            .map { (bpm: 60 * envelopeRate / $0.position, value: $0.value / Double(r[0])) }
            .filter { settings.bpmRange.contains($0.bpm) && $0.value > 0 }
    }

    /// Per-window energies and tempi (the song's tempo does not depend on them).
    private func windowRecords() -> [AnalysisWindow] {
        let layout = TempoVote(configuration: TempoVoteConfiguration(
            windowSeconds: settings.windowSeconds, hopSeconds: settings.hopSeconds,
            minBPM: settings.bpmRange.lowerBound, maxBPM: settings.bpmRange.upperBound))
        let groupSeconds = Double(decimation) / sampleRate
        return layout.windowRanges(frameCount: envelope.count, frameRate: envelopeRate).map { range in
            let best = tempoPeaks(envelope[range]).first
            let energy = groupEnergies[range].reduce(0, +) / Float(max(range.count, 1))
            return AnalysisWindow(
                startS: Double(range.lowerBound) * groupSeconds, durationS: Double(range.count) * groupSeconds,
                energy: Double(energy), bpm: best?.bpm, strength: min(max(best?.value ?? 0, 0), 1))
        }
    }
}
