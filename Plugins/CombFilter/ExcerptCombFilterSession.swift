import TactusDetector
import TactusVote
import TactusDSP

/// The `excerpt` comb filter (preset `classic`): the pipeline of seed 000 section 4.5 and seed
/// 002 section 5.4 on one excerpt from the middle of the song, at the song's sample rate.
///
/// Only the excerpt is kept (plus the last excerpt-length of audio, used when the song turns
/// out shorter than announced), so memory stays bounded whatever the song's length.
final class ExcerptCombFilterSession: DetectorSession {
    private let sampleRate: Double
    private let bandEdges: [Double]
    private let smoothingSeconds: Double
    private let weights: [Double]
    private let minBPM: Double
    private let maxBPM: Double
    /// Search steps of the coarse-to-fine comb search, in BPM.
    private static let searchSteps = [2.0, 0.5, 0.1, 0.01]

    private let excerptLength: Int
    /// First sample of the planned excerpt, when the song's length is known.
    private let plannedStart: Int?
    private var excerpt: [Float] = []
    /// The last `excerptLength` samples, circularly, for songs shorter than announced.
    private var recent: [Float]
    private var recentNext = 0
    private var position = 0

    init(parameters: ParameterSet, format: SignalFormat) {
        sampleRate = format.sampleRate
        bandEdges = parameters.numbers("band_edges_hz")
        smoothingSeconds = parameters.number("smoothing_s")
        weights = CombEnergy.weights(pulses: parameters.integer("pulses"))
        minBPM = parameters.number("min_bpm")
        maxBPM = parameters.number("max_bpm")
        excerptLength = max(64, Int((parameters.number("excerpt_samples") * format.sampleRate / 44_100).rounded()))
        if let frames = format.expectedFrames, frames >= excerptLength {
            plannedStart = (frames - excerptLength) / 2
        } else {
            plannedStart = nil
        }
        recent = [Float](repeating: 0, count: excerptLength)
        excerpt.reserveCapacity(excerptLength)
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        if let start = plannedStart, excerpt.count < excerptLength {
            let from = max(start - position, 0)
            let to = min(start + excerptLength - position, samples.count)
            if from < to {
                excerpt.append(contentsOf: UnsafeBufferPointer(rebasing: samples[from..<to]))
            }
        }
        for sample in samples {
            recent[recentNext] = sample
            recentNext = recentNext + 1 == excerptLength ? 0 : recentNext + 1
        }
        position += samples.count
    }

    func finish() -> DetectorOutput {
        var start = plannedStart ?? 0
        if excerpt.count < excerptLength {
            // The song was shorter than announced (or of unknown length): take its end.
            let available = min(position, excerptLength)
            excerpt = (0..<available).map { recent[(recentNext - available + $0 + excerptLength) % excerptLength] }
            start = position - available
        }
        recent = []
        let energy = excerpt.isEmpty ? 0 : excerpt.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(excerpt.count)
        var window = AnalysisWindow(
            startS: Double(start) / sampleRate, durationS: Double(excerpt.count) / sampleRate,
            energy: energy, bpm: nil, strength: 0)
        let longestComb = Double(weights.count) * 60 / minBPM * sampleRate
        guard Double(excerpt.count) > longestComb else {
            return DetectorOutput(bpm: nil, reason: "too short", confidence: 0, candidates: [], windows: [window])
        }
        guard energy >= TempoVoteConfiguration().silenceMeanSquare else {
            return DetectorOutput(bpm: nil, reason: "silence", confidence: 0, candidates: [], windows: [window])
        }
        let autocorrelation = onsetAutocorrelation(maxLag: Int(longestComb.rounded(.up)) + 2)
        func score(_ bpm: Double) -> Double {
            CombEnergy.excess(autocorrelation, lag: 60 * sampleRate / bpm, weights: weights)
        }
        let coarse = stride(from: minBPM, through: maxBPM, by: Self.searchSteps[0]).map { ($0, score($0)) }
        let best = refine(coarse.max { $0.1 < $1.1 }!.0, score: score)
        guard best.score > 0 else {
            return DetectorOutput(bpm: nil, reason: "no periodicity", confidence: 0, candidates: [], windows: [window])
        }
        // How far the winner stands out of the comb energies over the whole range: about 1 for
        // a click track, about 0 for noise.
        let median = coarse.map(\.1).sorted()[coarse.count / 2]
        let strength = min(max((best.score - median) / best.score, 0), 1)
        window.bpm = best.bpm
        window.strength = strength
        return DetectorOutput(
            bpm: best.bpm, confidence: strength,
            candidates: candidates(best: best, coarse: coarse, score: score), windows: [window])
    }

    /// Seed 000's coarse-to-fine search: around the best tempo of each step, search plus or
    /// minus the previous step with the next, finer step.
    private func refine(_ coarse: Double, score: (Double) -> Double) -> (bpm: Double, score: Double) {
        var best = (bpm: coarse, score: score(coarse))
        for (previous, step) in zip(Self.searchSteps, Self.searchSteps.dropFirst()) {
            let centre = best.bpm
            let low = max(minBPM, centre - previous), high = min(maxBPM, centre + previous)
            for bpm in stride(from: low, through: high + step / 2, by: step) where bpm <= high {
                let value = score(bpm)
                if value > best.score { best = (bpm, value) }
            }
        }
        return best
    }

    /// The winner, its octave relatives in range and the other coarse peaks, refined, at most
    /// five, strengths relative to the winner.
    private func candidates(
        best: (bpm: Double, score: Double), coarse: [(Double, Double)], score: (Double) -> Double
    ) -> [TempoCandidate] {
        var found = [best]
        func isNew(_ bpm: Double) -> Bool { !found.contains { abs($0.bpm - bpm) <= 0.04 * bpm } }
        for factor in [2.0, 0.5, 3.0, 1.0 / 3.0] {
            let target = best.bpm * factor
            guard target >= minBPM, target <= maxBPM, isNew(target) else { continue }
            found.append(refine(target, score: score))
        }
        let peaks = coarse.indices.filter { index in
            (index == 0 || coarse[index].1 > coarse[index - 1].1)
                && (index == coarse.count - 1 || coarse[index].1 >= coarse[index + 1].1)
        }.sorted { coarse[$0].1 > coarse[$1].1 }
        for index in peaks where found.count < 5 && isNew(coarse[index].0) {
            found.append(refine(coarse[index].0, score: score))
        }
        return found.prefix(5)
            .map { TempoCandidate(bpm: $0.bpm, strength: min(max($0.score / best.score, 0), 1)) }
            .sorted { $0.strength > $1.strength }
    }

    /// Filterbank, rectification, half-Hann smoothing and diff-rect of the excerpt, then the sum
    /// over bands of each band's autocorrelation up to `maxLag`.
    private func onsetAutocorrelation(maxLag: Int) -> [Float] {
        let count = excerpt.count
        let spectrumFFT = RealFFT(size: FFTSize.atLeast(count))
        excerpt.withUnsafeBufferPointer { spectrumFFT.load($0) }
        spectrumFFT.forward()
        let spectrum = Array(spectrumFFT.spectrum)
        let binHz = sampleRate / Double(spectrumFFT.size)

        let smoothingLength = max(1, Int((smoothingSeconds * sampleRate).rounded()))
        let smoother = RealFFT(size: FFTSize.atLeast(count + smoothingLength + 1))
        let window = Window.halfHann(length: smoothingLength)
        window.withUnsafeBufferPointer { smoother.load($0) }
        smoother.forward()
        let windowSpectrum = Array(smoother.spectrum)

        let correlator = FFTAutocorrelation(length: count, maxLag: min(maxLag, count - 1))
        var total = [Float](repeating: 0, count: correlator.maxLag + 1)
        var bandCorrelation = total
        var onsets = [Float](repeating: 0, count: count)
        for (low, high) in zip(bandEdges, bandEdges.dropFirst()) {
            // Brick-wall band: keep the bins in [low, high).
            let bins = spectrumFFT.spectrum
            var any = false
            for bin in bins.indices {
                let hz = Double(bin) * binHz
                if hz >= low && hz < high {
                    bins[bin] = spectrum[bin]
                    any = true
                } else {
                    bins[bin] = (0, 0)
                }
            }
            guard any else { continue }
            spectrumFFT.inverse()
            // Full-wave rectify (FFTW's inverse is scaled by the size; the scale cancels below).
            let input = smoother.samples
            for index in 0..<smoother.size {
                input[index] = index < count ? abs(spectrumFFT.samples[index]) : 0
            }
            smoother.forward()
            for bin in smoother.spectrum.indices {
                let (a, b) = smoother.spectrum[bin], (c, d) = windowSpectrum[bin]
                smoother.spectrum[bin] = (a * c - b * d, a * d + b * c)
            }
            smoother.inverse()
            // Diff-rect of the smoothed envelope.
            let smoothed = smoother.samples
            onsets[0] = 0
            for index in 1..<count {
                onsets[index] = max(smoothed[index] - smoothed[index - 1], 0)
            }
            onsets.withUnsafeBufferPointer { input in
                bandCorrelation.withUnsafeMutableBufferPointer { correlator.compute(input, into: $0) }
            }
            for lag in total.indices { total[lag] += bandCorrelation[lag] }
        }
        return total
    }
}
