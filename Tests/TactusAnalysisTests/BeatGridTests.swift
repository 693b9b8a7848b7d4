import Foundation
import Testing
import TactusAnalysis
import TactusDetector
import TactusTestSupport

/// The constant beat grid every analysis fits at the consensus tempo: songs synthesised with
/// known beats, written through libsndfile and analysed from the file by the default detectors.
@Suite struct BeatGridTests {
    static let rate = 44_100

    static func defaultDetectors() throws -> [any TempoDetector] {
        let registry = BuiltinDetectors.registry
        return try registry.defaultNames.map { try registry.make($0) }
    }

    /// The largest distance from a beat of `grid` within `span` to the nearest of `beats`.
    static func largestMiss(of grid: BeatGrid, beats: [Double], span: ClosedRange<Double>) -> Double {
        grid.beats(until: span.upperBound).filter { span.contains($0) }
            .map { fitted in beats.map { abs($0 - fitted) }.min() ?? .infinity }.max() ?? .infinity
    }

    /// A drum pattern at a tempo no detector reads exactly, starting after a silence: the grid's
    /// beats stay within 15 ms of the true ones from the first to the last (a tempo off by 0.05 %
    /// would miss by 45 ms at the end).
    @Test(arguments: [(123.4, 0.37), (96.7, 0.05), (171.3, 0.61)])
    func theGridFallsOnTheBeatsFromStartToEnd(bpm: Double, offset: Double) throws {
        let seconds = 90.0
        let drums = Synth.drumPattern(bpm: bpm, seconds: seconds - offset, sampleRate: Double(Self.rate), pattern: .backbeat)
        let song = Synth.silence(seconds: offset, sampleRate: Double(Self.rate)) + drums
        let analysis = try TestSongs.analyze([song], sampleRate: Self.rate, detectors: Self.defaultDetectors())
        let grid = try #require(analysis.beatGrid, "no grid at \(bpm) BPM")
        let consensus = try #require(analysis.consensus.bpm)
        #expect(abs(grid.bpm / consensus - 1) <= BeatGrid.tempoRange)
        let level = try #require([0.5, 1, 2].first { abs(grid.bpm / bpm / $0 - 1) < 0.02 }, "grid at \(grid.bpm) BPM for \(bpm)")
        // The drums' beats (at double the tempo, the beats between them too), and the grid's
        // beats over the song: each on one of them.
        let beats = Synth.beatTimes(startBPM: bpm * max(level, 1), endBPM: bpm * max(level, 1), seconds: seconds).map { $0 + offset }
        let miss = Self.largestMiss(of: grid, beats: beats, span: (offset + 1)...(seconds - 1))
        #expect(miss <= 0.015, "grid \(grid.bpm) BPM from \(grid.firstBeatS) s misses a beat by \(miss) s")
        #expect(grid.beats(until: seconds).count >= Int((seconds - offset) * bpm * level / 60) - 1)
        #expect(grid.firstBeatS >= 0 && grid.firstBeatS < grid.periodS)
        #expect(grid.clarity >= BeatGridFit.minimumClarity)
    }

    /// Kick on every beat, snare and hi-hat on every off-beat ("and"): the onsets are strongest
    /// between the beats, as in a skank or a two-step.
    static let offBeatAccents = Synth.Pattern(
        hits: (0..<4).flatMap { beat in [(Double(beat), Synth.Drum.kick), (Double(beat) + 0.5, .snare), (Double(beat) + 0.5, .hihat)] })

    /// A song whose strongest onsets fall between the beats, starting on a beat (after a
    /// silence or not): the grid takes the phase the music starts on, its beats on the kicks,
    /// not on the louder off-beats.
    @Test(arguments: [(118.0, 0.0), (131.7, 0.43), (97.3, 1.2)])
    func theGridIsOnTheBeatTheMusicStartsOnNotOnLouderOffBeats(bpm: Double, offset: Double) throws {
        let seconds = 60.0
        let drums = Synth.drumPattern(
            bpm: bpm, seconds: seconds - offset, sampleRate: Double(Self.rate), pattern: Self.offBeatAccents)
        let song = Synth.silence(seconds: offset, sampleRate: Double(Self.rate)) + drums
        let analysis = try TestSongs.analyze([song], sampleRate: Self.rate, detectors: Self.defaultDetectors())
        let grid = try #require(analysis.beatGrid, "no grid at \(bpm) BPM")
        try #require(abs(grid.bpm / bpm - 1) < 0.02, "grid at \(grid.bpm) BPM for \(bpm)")
        let beats = Synth.beatTimes(startBPM: bpm, endBPM: bpm, seconds: seconds).map { $0 + offset }
        let miss = Self.largestMiss(of: grid, beats: beats, span: (offset + 1)...(seconds - 1))
        #expect(miss <= 0.03, "grid \(grid.bpm) BPM from \(grid.firstBeatS) s misses a beat by \(miss) s")
    }

    /// Noise has no beat: no grid, whatever tempo the detectors make of it.
    @Test func noiseHasNoGrid() throws {
        let noise = Synth.whiteNoise(seconds: 40, sampleRate: Double(Self.rate), amplitude: 0.3, seed: 11)
        let analysis = try TestSongs.analyze([noise], sampleRate: Self.rate, detectors: Self.defaultDetectors())
        #expect(analysis.beatGrid == nil, "noise has a grid: \(String(describing: analysis.beatGrid))")
    }

    /// The grid is in `analyze --json`'s object, marked constant.
    @Test func theGridIsEncodedAsConstant() throws {
        let grid = BeatGrid(bpm: 120.5, firstBeatS: 0.25, clarity: 3)
        let json = try #require(String(data: try JSONEncoder().encode(grid), encoding: .utf8))
        #expect(json.contains("\"kind\":\"constant\"") && json.contains("\"first_beat_s\":0.25"))
        #expect(try JSONDecoder().decode(BeatGrid.self, from: Data(json.utf8)) == grid)
        let other = json.replacingOccurrences(of: "constant", with: "tracked")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(BeatGrid.self, from: Data(other.utf8)) }
    }

    /// A grid from elsewhere with a field out of range says which.
    @Test func aGridOutOfRangeSaysWhy() {
        #expect(BeatGrid(bpm: 120, firstBeatS: 0.1, clarity: 2).problem == nil)
        #expect(BeatGrid(bpm: .nan, firstBeatS: 0.1, clarity: 2).problem?.contains("bpm") == true)
        #expect(BeatGrid(bpm: 120, firstBeatS: 0.6, clarity: 2).problem?.contains("first_beat_s") == true)
        #expect(BeatGrid(bpm: 120, firstBeatS: 0.1, clarity: -1).problem?.contains("clarity") == true)
    }

    /// A duration whose beats no `Int` can count (a library's stored 1e300 s) gives no beats: the
    /// count's conversion trapped (`tactus beats SONG --server` crashed on such a song).
    @Test func aDurationBeyondAnyCountGivesNoBeatsRatherThanATrap() {
        let grid = BeatGrid(bpm: 120, firstBeatS: 0.1, clarity: 2)
        #expect(grid.beats(until: 1e300).isEmpty)
        #expect(grid.beats(until: 2).count == 4)
    }
}
