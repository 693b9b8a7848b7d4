import Foundation

/// A small deterministic random number generator (SplitMix64), so synthesised noise is the
/// same on every run.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform sample in [-1, 1).
    public mutating func nextSigned() -> Float {
        Float(next() >> 40) / Float(1 << 23) - 1
    }
}

/// Synthesised test music with a known tempo, defined in continuous time so the same music
/// can be rendered at any sample rate.
public enum Synth {
    /// The drum instruments of ``drumPattern(bpm:seconds:sampleRate:pattern:seed:)``.
    public enum Drum: Sendable {
        case kick, snare, hihat
    }

    /// Where drums fall within a bar of four beats, in beats from the bar's start.
    public struct Pattern: Sendable {
        public var hits: [(beat: Double, drum: Drum)]

        public init(hits: [(beat: Double, drum: Drum)]) {
            self.hits = hits
        }

        /// Kick on every beat, snare on 2 and 4, hi-hat on the off-beats (house, disco).
        public static let fourOnTheFloor = Pattern(
            hits: [(0, .kick), (1, .kick), (2, .kick), (3, .kick), (1, .snare), (3, .snare),
                   (0.5, .hihat), (1.5, .hihat), (2.5, .hihat), (3.5, .hihat)])
        /// Kick on 1 and 3, snare on 2 and 4, hi-hat on every eighth (rock, pop).
        public static let backbeat = Pattern(
            hits: [(0, .kick), (2, .kick), (1, .snare), (3, .snare)]
                + (0..<8).map { (Double($0) * 0.5, Drum.hihat) })
        /// Kick on 1, snare on 3 only, hi-hat on every eighth (half-time feel, trap).
        public static let halfTime = Pattern(
            hits: [(0, .kick), (2.5, .kick), (2, .snare)] + (0..<8).map { (Double($0) * 0.5, Drum.hihat) })
        /// Compound metre, 12/8 (or 6/8 twice): the beat a dotted quarter of three eighths;
        /// kick on 1 and 3, snare on 2 and 4, hi-hat on every eighth (a shuffle, a slow blues).
        public static let twelveEight = Pattern(
            hits: [(0, .kick), (2, .kick), (1, .snare), (3, .snare)] + (0..<12).map { (Double($0) / 3, Drum.hihat) })
        /// A jig (6/8, twice a bar): kick on the first and third eighth of the first beat, snare
        /// on the second beat, hi-hat on the other eighths.
        public static let jig = Pattern(
            hits: [0.0, 2.0].flatMap { (bar: Double) -> [(beat: Double, drum: Drum)] in
                let eighth = 1.0 / 3
                return [
                    (bar, .kick), (bar + 2 * eighth, .kick), (bar + 1, .snare),
                    (bar + eighth, .hihat), (bar + 4 * eighth, .hihat), (bar + 5 * eighth, .hihat),
                ]
            })
    }

    /// Silence.
    public static func silence(seconds: Double, sampleRate: Double) -> [Float] {
        [Float](repeating: 0, count: Int(seconds * sampleRate))
    }

    /// A pure tone.
    public static func sine(hz: Double, seconds: Double, sampleRate: Double, amplitude: Float = 0.5) -> [Float] {
        (0..<Int(seconds * sampleRate)).map { amplitude * Float(sin(2 * .pi * hz * Double($0) / sampleRate)) }
    }

    /// White noise, uniform in [-amplitude, amplitude].
    public static func whiteNoise(seconds: Double, sampleRate: Double, amplitude: Float = 0.5, seed: UInt64 = 1) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        return (0..<Int(seconds * sampleRate)).map { _ in amplitude * generator.nextSigned() }
    }

    /// Beat times (seconds) of a tempo going linearly per beat from `startBPM` to `endBPM`
    /// over `seconds` (a constant tempo when they are equal).
    public static func beatTimes(startBPM: Double, endBPM: Double, seconds: Double, offset: Double = 0) -> [Double] {
        let approximateBeats = seconds * max(startBPM, endBPM) / 60
        var times: [Double] = []
        var time = offset
        var index = 0.0
        while time < seconds {
            times.append(time)
            let fraction = approximateBeats > 1 ? min(index / approximateBeats, 1) : 0
            let bpm = startBPM + (endBPM - startBPM) * fraction
            time += 60 / bpm
            index += 1
        }
        return times
    }

    /// A click track: a 1 kHz click of 20 ms on every beat, every `accentEvery`-th beat louder.
    public static func clickTrack(
        bpm: Double, seconds: Double, sampleRate: Double, endBPM: Double? = nil, accentEvery: Int = 4
    ) -> [Float] {
        var signal = silence(seconds: seconds, sampleRate: sampleRate)
        for (index, time) in beatTimes(startBPM: bpm, endBPM: endBPM ?? bpm, seconds: seconds).enumerated() {
            let amplitude: Float = index % max(accentEvery, 1) == 0 ? 0.9 : 0.6
            add(click(sampleRate: sampleRate, amplitude: amplitude), to: &signal, at: time, sampleRate: sampleRate)
        }
        return signal
    }

    /// Beat times (seconds) of a tempo that is `bpm(t)` BPM at time `t`, over `seconds`: each beat
    /// follows the previous one by a beat at the tempo of its moment (steps, ramps, a ritardando).
    public static func beatTimes(seconds: Double, bpm: (Double) -> Double) -> [Double] {
        var times: [Double] = []
        var time = 0.0
        while time < seconds {
            times.append(time)
            time += 60 / bpm(time)
        }
        return times
    }

    /// A drum pattern at `bpm` (or a linear ramp to `endBPM`): kick, snare and hi-hat placed by
    /// `pattern`, with a quiet sustained bass note under it so the signal is not only drums.
    public static func drumPattern(
        bpm: Double, seconds: Double, sampleRate: Double, pattern: Pattern = .fourOnTheFloor,
        endBPM: Double? = nil, seed: UInt64 = 7
    ) -> [Float] {
        drumPattern(
            beats: beatTimes(startBPM: bpm, endBPM: endBPM ?? bpm, seconds: seconds + 8), lastBeat: 60 / bpm, seconds: seconds,
            sampleRate: sampleRate, pattern: pattern, seed: seed)
    }

    /// A drum pattern whose tempo is `bpm(t)` at time `t` (see ``beatTimes(seconds:bpm:)``), as
    /// ``drumPattern(bpm:seconds:sampleRate:pattern:endBPM:seed:)`` makes it.
    public static func drumPattern(
        seconds: Double, sampleRate: Double, pattern: Pattern = .fourOnTheFloor, seed: UInt64 = 7, bpm: (Double) -> Double
    ) -> [Float] {
        drumPattern(
            beats: beatTimes(seconds: seconds + 8, bpm: bpm), lastBeat: 60 / bpm(seconds), seconds: seconds, sampleRate: sampleRate,
            pattern: pattern, seed: seed)
    }

    /// The drums of `pattern` on `beats` (the last beat lasting `lastBeat` seconds), and the bass.
    private static func drumPattern(
        beats: [Double], lastBeat: Double, seconds: Double, sampleRate: Double, pattern: Pattern, seed: UInt64
    ) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        var signal = silence(seconds: seconds, sampleRate: sampleRate)
        for (index, beatTime) in beats.enumerated() where beatTime < seconds {
            let beatLength = index + 1 < beats.count ? beats[index + 1] - beatTime : lastBeat
            let beatInBar = Double(index % 4)
            for hit in pattern.hits where hit.beat >= beatInBar && hit.beat < beatInBar + 1 {
                let time = beatTime + (hit.beat - beatInBar) * beatLength
                let sound: [Float]
                switch hit.drum {
                case .kick: sound = kick(sampleRate: sampleRate)
                case .snare: sound = snare(sampleRate: sampleRate, generator: &generator)
                case .hihat: sound = hihat(sampleRate: sampleRate, generator: &generator)
                }
                add(sound, to: &signal, at: time, sampleRate: sampleRate)
            }
        }
        for index in signal.indices {
            let time = Double(index) / sampleRate
            signal[index] += 0.05 * Float(sin(2 * .pi * 55 * time))
        }
        return normalised(signal, peak: 0.8)
    }

    /// Interleaves channels of equal length into one buffer (frame by frame).
    public static func interleave(_ channels: [[Float]]) -> [Float] {
        guard channels.count > 1 else { return channels.first ?? [] }
        guard let frames = channels.map(\.count).min() else { return [] }
        var out = [Float](repeating: 0, count: frames * channels.count)
        for frame in 0..<frames {
            for (channel, samples) in channels.enumerated() {
                out[frame * channels.count + channel] = samples[frame]
            }
        }
        return out
    }

    /// Scales `signal` so its largest magnitude is `peak`.
    public static func normalised(_ signal: [Float], peak: Float) -> [Float] {
        let largest = signal.reduce(0) { max($0, abs($1)) }
        guard largest > 0 else { return signal }
        return signal.map { $0 * peak / largest }
    }

    // MARK: Instruments

    private static func add(_ sound: [Float], to signal: inout [Float], at time: Double, sampleRate: Double) {
        let start = Int((time * sampleRate).rounded())
        guard start < signal.count, start >= 0 else { return }
        for (offset, sample) in sound.enumerated() where start + offset < signal.count {
            signal[start + offset] += sample
        }
    }

    private static func click(sampleRate: Double, amplitude: Float) -> [Float] {
        (0..<Int(0.02 * sampleRate)).map { index in
            let time = Double(index) / sampleRate
            return amplitude * Float(sin(2 * .pi * 1000 * time) * exp(-time / 0.004))
        }
    }

    private static func kick(sampleRate: Double) -> [Float] {
        var phase = 0.0
        return (0..<Int(0.25 * sampleRate)).map { index in
            let time = Double(index) / sampleRate
            let frequency = 50 + 100 * exp(-time / 0.03)
            phase += 2 * .pi * frequency / sampleRate
            return Float(sin(phase) * exp(-time / 0.08))
        }
    }

    private static func snare(sampleRate: Double, generator: inout SeededGenerator) -> [Float] {
        (0..<Int(0.18 * sampleRate)).map { index in
            let time = Double(index) / sampleRate
            let noise = Double(generator.nextSigned())
            return Float((0.6 * noise + 0.4 * sin(2 * .pi * 190 * time)) * exp(-time / 0.05))
        }
    }

    private static func hihat(sampleRate: Double, generator: inout SeededGenerator) -> [Float] {
        var previous: Float = 0
        return (0..<Int(0.05 * sampleRate)).map { index in
            let time = Double(index) / sampleRate
            let noise = generator.nextSigned()
            let highPassed = noise - previous  // first difference: a crude high-pass
            previous = noise
            return 0.25 * highPassed * Float(exp(-time / 0.012))
        }
    }
}
