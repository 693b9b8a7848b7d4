import Foundation
import TactusAnalysis
import TactusDetector
import TactusTestSupport
import Testing

/// The tempo map of songs synthesised with known tempo changes (steps, ramps, a ritardando)
/// and of steady songs, analysed by the default detectors from a file as real songs are.
@Suite struct TempoMapTests {
    static let rate = 22050

    /// A song whose tempo is `bpm(t)`, its analysis and its map; `octave` is the factor between
    /// the map's tempi and the song's (the consensus may read the song at double or half).
    struct Mapped {
        let map: TempoMap
        let octave: Double
        let bpm: (Double) -> Double
        let seconds: Double

        /// The map's tempo at `time`, along its segment (ramps are straight in log tempo).
        func tempo(at time: Double) -> Double {
            let segment = map.segments.first { time < $0.endS } ?? map.segments.last!
            let fraction = (time - segment.startS) / max(segment.endS - segment.startS, 1e-9)
            return exp2(log2(segment.startBPM) + fraction * (log2(segment.endBPM) - log2(segment.startBPM))) / octave
        }

        /// The song's tempo averaged over the 12 s around `time`, as a window there hears it.
        func heard(at time: Double) -> Double {
            let times = stride(from: max(time - 6, 0), to: min(time + 6, seconds), by: 0.05).map { $0 }
            return times.reduce(0) { $0 + bpm($1) } / Double(times.count)
        }
    }

    func mapped(seconds: Double, pattern: Synth.Pattern = .backbeat, _ bpm: @escaping (Double) -> Double) throws -> Mapped {
        let signal = Synth.drumPattern(seconds: seconds, sampleRate: Double(Self.rate), pattern: pattern, bpm: bpm)
        let detectors = try BuiltinDetectors.registry.defaultNames.map { try BuiltinDetectors.registry.make($0) }
        let song = try TestSongs.analyze([signal], sampleRate: Self.rate, detectors: detectors)
        let consensus = try #require(song.consensus.bpm)
        let map = try #require(TempoMap.of(song.analyses, consensus: consensus))
        // The map is at the consensus' level; the song's tempo at the start tells the octave.
        let octave = exp2((log2(map.segments[0].startBPM / bpm(0))).rounded())
        return Mapped(map: map, octave: octave, bpm: bpm, seconds: seconds)
    }

    @Test(arguments: [(120.0, Synth.Pattern.backbeat), (87, .fourOnTheFloor), (174, .halfTime), (63, .backbeat)])
    func aSteadySongIsOneSegment(bpm: Double, pattern: Synth.Pattern) throws {
        let song = try mapped(seconds: 90, pattern: pattern) { _ in bpm }
        #expect(song.map.stable && song.map.segments.count == 1, "\(song.map.segments)")
        #expect(song.map.segments.first.map { abs($0.startS) < 1e-9 && abs($0.endS - 90) < 0.5 } == true)
        #expect(abs(song.tempo(at: 45) / bpm - 1) < 0.02)
        #expect(song.map.minBPM <= song.map.maxBPM && song.map.maxBPM / song.map.minBPM < 1.02)
    }

    @Test(arguments: [(100.0, 130.0, 45.0), (120, 126, 40), (140, 110, 60), (90, 115, 30)])
    /// Steps by ratios that are no 3:2 or 4:3 (a change by exactly such a ratio reads as the
    /// same tempo at another metrical level: ``TempoSeries/atConsensusLevel(_:reference:within:)``).
    func aStepIsFoundWhereItIsWithBothTempi(from: Double, to: Double, at: Double) throws {
        let song = try mapped(seconds: 100) { $0 < at ? from : to }
        #expect(!song.map.stable)
        let segments = song.map.segments
        #expect(segments.count == 2 && segments.allSatisfy(\.isSteady), "\(segments)")
        guard segments.count == 2 else { return }
        #expect(abs(segments[0].endS - at) <= 2, "the change at \(at) s is placed at \(segments[0].endS) s")
        #expect(abs(segments[0].startBPM / song.octave / from - 1) < 0.02 && abs(segments[1].startBPM / song.octave / to - 1) < 0.02)
        #expect(abs(song.map.minBPM / song.octave / min(from, to) - 1) < 0.02 && abs(song.map.maxBPM / song.octave / max(from, to) - 1) < 0.02)
    }

    /// Tempo curves with ramps between steady parts.
    enum Ramp: String, CaseIterable, Sendable {
        /// 110 BPM slowing from 60 s to 80 BPM at 80 s, then 80 BPM.
        case ritardando
        /// 100 BPM quickening from 40 s to 130 BPM at 80 s, then 130 BPM.
        case accelerando

        var from: Double { self == .ritardando ? 110 : 100 }
        var to: Double { self == .ritardando ? 80 : 130 }
        var span: ClosedRange<Double> { self == .ritardando ? 60...80 : 40...80 }

        func bpm(_ time: Double) -> Double {
            from + (to - from) * min(max((time - span.lowerBound) / (span.upperBound - span.lowerBound), 0), 1)
        }
    }

    /// A ramp between steady parts: the steady tempi within 2 %, the ramp's start and end
    /// within 4 s (a step is placed within 2 s; the 12 s windows smear a knee more), and the
    /// tempo along it going from one to the other.
    @Test(arguments: Ramp.allCases)
    func aRampIsFoundBetweenItsSteadyParts(ramp: Ramp) throws {
        let song = try mapped(seconds: 120, ramp.bpm)
        let segments = song.map.segments
        #expect(!song.map.stable)
        let ramps = segments.filter { !$0.isSteady }
        try #require(!ramps.isEmpty && segments.first!.isSteady && segments.last!.isSteady, "\(ramp): \(segments)")
        #expect(abs(segments.first!.startBPM / song.octave / ramp.from - 1) < 0.02 && abs(segments.last!.endBPM / song.octave / ramp.to - 1) < 0.02)
        #expect(abs(ramps.first!.startS - ramp.span.lowerBound) <= 4 && abs(ramps.last!.endS - ramp.span.upperBound) <= 4, "\(ramp): \(segments)")
        let along = stride(from: ramps.first!.startS, through: ramps.last!.endS, by: 1).map { song.tempo(at: $0) }
        let ascending = ramp.to > ramp.from
        #expect(zip(along, along.dropFirst()).allSatisfy { ascending ? $1 >= $0 * 0.99 : $1 <= $0 * 1.01 }, "\(ramp): \(along)")
    }
}
