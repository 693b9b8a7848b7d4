import Foundation
import TactusDSP
import TactusDetector
import TactusVote

/// The settings of a BeatNet analysis, read from a resolved parameter set.
struct BeatNetSettings {
    var levelDBFS: Double
    /// The comb filters' feedback gain and the histogram's smoothing, in delay bins.
    var combAlpha: Float
    var histogramSmoothing: Int
    /// The weight of the spectral flux, scaled to peak at 1, added to the beat activation
    /// that the comb filters and the beat tracker read.
    var onsetWeight: Float
    /// The windows, the tempo range and the metrical decision.
    var vote: TempoVoteConfiguration
    /// The beat tracker's tempo range around the song's tempo (a ratio: 0.3 is 1/1.3 to 1.3
    /// times the tempo) and its model.
    var trackingRange: Double
    var tracker: BeatTracker

    init(_ parameters: ParameterSet) {
        levelDBFS = parameters.number("level_dbfs")
        combAlpha = Float(parameters.number("comb_alpha"))
        histogramSmoothing = parameters.integer("histogram_smoothing")
        onsetWeight = Float(parameters.number("onset_weight"))
        vote = TempoVoteConfiguration(parameters)
        trackingRange = parameters.number("tracking_range")
        tracker = BeatTracker(
            transitionLambda: parameters.number("transition_lambda"), observationLambda: parameters.number("observation_lambda"))
    }
}

/// One song through BeatNet: resampling to 22,050 Hz (``ResampledSignal``, shared with other
/// detectors at that rate), the filtered spectrogram while the song
/// streams in, then at the end the level normalisation, the features and the network, the
/// tempo from resonating comb filters on the beat activation and the beats from the
/// tempo-and-position model.
///
/// The state that grows with the song is the filtered spectrogram (136 values per 20 ms frame,
/// 27 kB per second of audio) and the activation.
final class BeatNetSession: BeatTrackingSession {
    /// The network's frame rate: 50 per second.
    static let frameRate = BeatNetDetector.sampleRate / Double(FilteredSpectrogram.hop)
    /// The comb filters read the activation at four times the network's rate: at 50 frames
    /// per second a delay of one frame is 2 % of the tempo.
    static let upsampling = 4
    static let envelopeRate = frameRate * Double(upsampling)
    /// The beat tracker reads the comb filters' frames, 200 per second. Its beat intervals are
    /// whole frames, so a steady tempo between two of them is followed by changing interval
    /// now and then, each change costing the transition's probability: at 100 frames per
    /// second (the rate the state-space model was made for) a song at 177 bpm lies between
    /// intervals of 33 and 34 frames, 3 % apart, and with changes that dear the path found it
    /// cheaper to drift to the off-beat for a section; at 200 frames per second the intervals
    /// are 1.5 % apart, and the tempo can be held firmly (``BeatTracker/transitionLambda``).
    static let trackingRate = envelopeRate

    private let settings: BeatNetSettings
    private let sampleRate: Double
    private var finite: FiniteSamples
    /// The song at 22,050 Hz, feeding ``spectrogram``.
    private let resampled: ResampledSignal
    private let spectrogram: FilteredSpectrogram
    /// The filtered magnitudes of the frames so far, ``FilteredSpectrogram/bandCount`` per frame.
    private(set) var magnitudes: [Float] = []
    /// Sums of squared input samples before the start of each 20 ms frame (at the input rate).
    private var energyPrefix: [Double] = [0]
    private var energy = 0.0
    private var sampleCount = 0
    /// What the beats are tracked on, kept after ``finish()`` for ``beats(near:)``: the beat
    /// activation with the onsets added (``trackerInput(activation:flux:onsetWeight:)``) at
    /// ``envelopeRate`` and the downbeat probability at ``frameRate``.
    private var tracked: (activation: [Float], downbeat: [Float])?

    init(settings: BeatNetSettings, format: SignalFormat, frontEnds: SharedFrontEnds) {
        self.settings = settings
        finite = FiniteSamples(format: format)
        sampleRate = format.sampleRate
        let key = ResampledSignal.Key(inputRate: format.sampleRate, outputRate: BeatNetDetector.sampleRate)
        resampled = frontEnds.shared(key) { ResampledSignal(key: key) }
        spectrogram = FilteredSpectrogram(sampleRate: BeatNetDetector.sampleRate)
        resampled.listen { [weak self] block in self?.take(block) }
        if let expectedFrames = format.expectedFrames {
            let frames = Int(Double(expectedFrames) / sampleRate * Self.frameRate) + 2
            // At most 2^17 frames (43 minutes at 50 per second) held in advance, whatever a
            // header claims: a longer song grows as it comes.
            magnitudes.reserveCapacity(min(frames, 1 << 17) * spectrogram.bandCount)
            energyPrefix.reserveCapacity(min(frames, 1 << 17) + 2)
        }
    }

    func consume(_ samples: UnsafeBufferPointer<Float>) {
        finite.process(samples) { clean in
            let position = sampleCount
            accumulateEnergy(clean)
            resampled.consume(clean, at: position)
        }
    }

    /// A block of the song at 22,050 Hz.
    private func take(_ block: UnsafeBufferPointer<Float>) {
        spectrogram.consume(block, frame: keep)
    }

    private func keep(_ bands: UnsafeBufferPointer<Float>) {
        magnitudes.append(contentsOf: bands)
    }

    private func frameStart(_ frame: Int) -> Int {
        Int((Double(frame) * sampleRate / Self.envelopeRate).rounded())
    }

    private func accumulateEnergy(_ samples: UnsafeBufferPointer<Float>) {
        var index = 0
        while index < samples.count {
            let boundary = frameStart(energyPrefix.count)
            let stop = min(samples.count, index + max(boundary - sampleCount, 0))
            energy += Self.sumOfSquares(UnsafeBufferPointer(rebasing: samples[index..<stop]))
            sampleCount += stop - index
            index = stop
            if sampleCount == boundary {
                energyPrefix.append(energy)
            }
        }
    }

    /// The sum of the squares of `samples` in double precision, in eight running sums (two
    /// of four lanes) added together at the end: the additions of one long chain would each
    /// wait for the one before.
    private static func sumOfSquares(_ samples: UnsafeBufferPointer<Float>) -> Double {
        guard let base = samples.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var low = SIMD4<Double>(), high = SIMD4<Double>()
        var index = 0
        while index + 8 <= samples.count {
            let values = raw.loadUnaligned(fromByteOffset: 4 * index, as: SIMD8<Float>.self)
            let first = SIMD4<Double>(values.lowHalf), second = SIMD4<Double>(values.highHalf)
            low += first * first
            high += second * second
            index += 8
        }
        var sum = (low + high).sum()
        while index < samples.count {
            sum += Double(samples[index]) * Double(samples[index])
            index += 1
        }
        return sum
    }

    func finish() -> DetectorOutput {
        resampled.finish()
        if let failure = resampled.failure {
            return DetectorOutput(bpm: nil, reason: failure.description, confidence: 0, candidates: [], windows: [])
        }
        spectrogram.finish(frame: keep)
        let bands = spectrogram.bandCount
        let frames = magnitudes.count / bands
        let gain = levelGain()
        let network: BeatNetActivation
        do throws(OpenBLAS.LoadFailure) {
            network = try BeatNetActivation(bandCount: bands)
        } catch {
            return DetectorOutput(bpm: nil, reason: error.description, confidence: 0, candidates: [], windows: [])
        }
        let activation = magnitudes.withUnsafeBufferPointer { network.activation(magnitudes: $0, gain: gain) }
        let beat = (0..<frames).map { activation[3 * $0] + activation[3 * $0 + 1] }
        let upsampler = BeatActivationUpsampler(factor: Self.upsampling)
        let upsampled = upsampler.upsample(beat)
        let envelope = OnsetStrengthEnvelope(
            frameRate: Self.envelopeRate, sampleRate: sampleRate, bands: [upsampled, upsampler.upsample(network.flux)],
            sampleCount: sampleCount, energyPrefix: prefix(frames: upsampled.count))
        var output = withOctaveRelatives(decide(envelope), activation: upsampled)
        tracked = (
            Self.trackerInput(activation: upsampled, flux: envelope.bands[1], onsetWeight: settings.onsetWeight),
            (0..<frames).map { activation[3 * $0 + 1] })
        if let bpm = output.bpm { output.beats = beats(near: bpm) }
        return output
    }

    /// The beats at tempi around `bpm` (the song's own tempo, or one decided elsewhere).
    func beats(near bpm: Double) -> BeatPositions? {
        guard let tracked, bpm.isFinite, bpm > 0 else { return nil }
        return beatPositions(activation: tracked.activation, downbeat: tracked.downbeat, bpm: bpm)
    }

    /// The beats at tempi around `bpm` and the downbeats among them, in seconds (frame `k` of
    /// the network is centred on `k / 50` s, frame `k` of `activation` on `k / 200` s).
    private func beatPositions(activation: [Float], downbeat: [Float], bpm: Double) -> BeatPositions {
        let interval = 60 * Self.trackingRate / bpm
        let range = 1 + settings.trackingRange
        let shortest = max(2, Int((interval / range).rounded(.down)))
        // The tracker follows at most 255 intervals (at 40 bpm, a range of about 0.5).
        let longest = min(max(2, Int((interval * range).rounded(.up))), shortest + Int(UInt8.max) - 1)
        let frames = settings.tracker.beats(activation, intervals: shortest...longest)
        let perNetworkFrame = Self.trackingRate / Self.frameRate
        let bars = settings.tracker.downbeats(
            frames.map { Int((Double($0) / perNetworkFrame).rounded()) }, downbeatProbability: downbeat)
        let seconds = { (frame: Int) in Double(frame) / Self.trackingRate }
        return BeatPositions(times: frames.map(seconds), downbeats: bars.isEmpty ? nil : bars.map { seconds(frames[$0]) })
    }

    /// The output with the tempo's double and half (inside the tempo range) among the
    /// candidates. The vote lists the relatives its metrical decision scored; on a clean beat
    /// activation the double tempo often scores nothing (no pulse between the beats), yet a
    /// user comparing candidates expects the octaves listed. A missing relative is added with
    /// the song's activation autocorrelation at its lag relative to the tempo's, and takes the
    /// place of the weakest other candidate when there are five.
    private func withOctaveRelatives(_ output: DetectorOutput, activation: [Float]) -> DetectorOutput {
        guard let bpm = output.bpm else { return output }
        let range = settings.vote.minBPM...settings.vote.maxBPM
        let relatives = [bpm * 2, bpm / 2].filter { range.contains($0) }
        let missing = relatives.filter { relative in !output.candidates.contains { TempoRelation.matches($0.bpm, relative) } }
        guard !missing.isEmpty else { return output }
        let r = EnvelopeAutocorrelation().of(activation[...])
        let lag = { (tempo: Double) in 60 * Self.envelopeRate / tempo }
        let reference = EnvelopeAutocorrelation.value(r, atLag: lag(bpm))
        guard reference > 0 else { return output }
        var candidates = output.candidates
        for relative in missing {
            let strength = min(max(EnvelopeAutocorrelation.value(r, atLag: lag(relative)) / reference, 0), 1)
            if candidates.count >= 5, let weakest = candidates.indices.last(where: { index in
                !relatives.contains { TempoRelation.matches(candidates[index].bpm, $0) } && abs(candidates[index].bpm - bpm) > 1e-9
            }) {
                candidates.remove(at: weakest)
            }
            candidates.append(TempoCandidate(bpm: relative, strength: strength))
        }
        var result = output
        let best = candidates.filter { abs($0.bpm - bpm) < 1e-9 }
        result.candidates = best + candidates.filter { abs($0.bpm - bpm) >= 1e-9 }.sorted { $0.strength > $1.strength }
        return result
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

    /// What the comb filters read: the beat activation plus `onset_weight` times the spectral
    /// flux of the network's input, the flux scaled so that its largest value is 1, as the
    /// activation's are. The network marks the events it takes for beats: on drum and bass the
    /// kick and snare of the half-time feel, on a syncopated or swung pattern some of the beats
    /// or a dotted level, and its filters then resonate at half, 3/4 or 3/2 of the tempo,
    /// while the onsets around those marks (hi-hats, the other instruments) repeat at the
    /// written beat. Added before the filters, the onsets change a frame's strongest filter
    /// mostly where the activation leaves two levels close.
    static func combInput(activation: [Float], flux: [Float], onsetWeight: Float) -> [Float] {
        guard let scale = fluxScale(flux, onsetWeight: onsetWeight) else { return activation }
        return zip(activation, flux).map { $0 + scale * $1 }
    }

    /// What the beat tracker reads: the comb filters' input divided by `1 + onset_weight`, the
    /// weighted mean of the activation and the scaled flux, which stays within 0...1 as the
    /// tracker's observation, a probability, must. Where the network marks the off-beats of a
    /// section (an open hi-hat, a skank) as strongly as the beats, the onsets of the other
    /// instruments on the beat keep the tracker on it (on `real`, `tactus-bench beats`: F 0.885
    /// and CMLt 0.858 with the activation alone, 0.893 and 0.867 with the onsets; real_005 and
    /// real_014 are no longer tracked on the off-beat for a section).
    static func trackerInput(activation: [Float], flux: [Float], onsetWeight: Float) -> [Float] {
        guard let scale = fluxScale(flux, onsetWeight: onsetWeight) else { return activation }
        let total = 1 + onsetWeight
        return zip(activation, flux).map { ($0 + scale * $1) / total }
    }

    /// `onset_weight` over the flux's largest value, or nil when the onsets add nothing.
    private static func fluxScale(_ flux: [Float], onsetWeight: Float) -> Float? {
        guard onsetWeight > 0, let top = flux.max(), top > 0 else { return nil }
        return onsetWeight / top
    }

    /// The windowed vote on the beat activation (band 0) with resonating comb filters as the
    /// evidence: the filters run once over the song (on the activation with the onsets added,
    /// ``combInput(activation:flux:onsetWeight:)``), from a third of the lowest tempo to three
    /// times the highest (the grid of the vote, so the metrical decision can read bars and
    /// subdivisions); each window's curve is the smoothed histogram of its frames' strongest
    /// filters read at the grid's tempi. The comb filters alone favour the slower of two
    /// metrical levels (a filter of twice the beat period, aligned with the stronger beats,
    /// outputs more there than the filter of the period), which the metrical decision weighs.
    /// The window's strength is the product of two periodicity contrasts at its best beat
    /// delay, the activation's and the spectral flux's (band 1): a network fed a steady tone or
    /// noise can still pulse on its own, but the signal's onsets then do not repeat at that
    /// period.
    private func decide(_ envelope: OnsetStrengthEnvelope) -> DetectorOutput {
        let vote = TempoVote(configuration: settings.vote)
        let rate = envelope.frameRate
        guard let fastest = vote.grid.bpms.last, let slowest = vote.grid.bpms.first, envelope.frameCount > 0 else {
            return DetectorOutput(bpm: nil, reason: "too short", confidence: 0, candidates: [], windows: [])
        }
        let delays = max(2, Int((60 * rate / fastest).rounded(.down)))...Int((60 * rate / slowest).rounded(.up))
        let bank = ResonatingCombFilters(alpha: settings.combAlpha, delays: delays)
        let winners = bank.winners(
            Self.combInput(activation: envelope.bands[0], flux: envelope.bands[1], onsetWeight: settings.onsetWeight))
        let beatIndices = vote.grid.indices(within: settings.vote.minBPM...settings.vote.maxBPM)
        let ordinary = EnvelopeAutocorrelation()
        return vote.decide(envelope) { window, grid in
            let frames = window.startFrame..<(window.startFrame + window.frameCount)
            let histogram = DelayHistogram(
                bank.histogram(winners, frames: frames), firstDelay: delays.lowerBound, frameRate: rate,
                smoothing: self.settings.histogramSmoothing)
            let curve = grid.bpms.map { histogram.value(atDelay: 60 * rate / $0) }
            guard let best = beatIndices.max(by: { curve[$0] < curve[$1] }), curve[best] > 0 else {
                return .none(count: grid.count)
            }
            let lags = window.lag(ofBPM: grid.bpms[beatIndices.upperBound - 1])...window.lag(ofBPM: grid.bpms[beatIndices.lowerBound])
            let lag = window.lag(ofBPM: grid.bpms[best])
            let beat = PeriodicityContrast(of: window.bands[0], lags: lags, autocorrelation: ordinary)
            let onsets = PeriodicityContrast(of: window.bands[1], lags: lags, autocorrelation: ordinary)
            return PeriodicityEvidence(strength: beat.strength(atLag: lag) * onsets.strength(atLag: lag), curve: curve)
        }
    }
}
