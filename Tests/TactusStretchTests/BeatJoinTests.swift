import Foundation
import TactusAudio
@testable import TactusStretch
import TactusTestSupport
import Testing

/// Beats found in audio at a known tempo, and crossfades of rendered workouts placed on them.
@Suite struct BeatJoinTests {
    static let rate = 22_050

    /// `seconds` of a click track at `bpm` whose first click comes `offset` seconds in.
    static func clicks(bpm: Double, seconds: Double, offset: Double) -> [Float] {
        Synth.silence(seconds: offset, sampleRate: Double(rate))
            + Synth.clickTrack(bpm: bpm, seconds: seconds - offset, sampleRate: Double(rate))
    }

    /// The times (seconds) where `samples` rise above `threshold` after 30 ms below it: the clicks' starts.
    static func onsets(_ samples: [Float], sampleRate: Int, threshold: Float = 0.15) -> [Double] {
        let quiet = Int(0.03 * Double(sampleRate))
        var times: [Double] = []
        var lastLoud = -quiet - 1
        for (index, sample) in samples.enumerated() where abs(sample) >= threshold {
            if index - lastLoud > quiet { times.append(Double(index) / Double(sampleRate)) }
            lastLoud = index
        }
        return times
    }

    /// The largest distance (seconds) of `times` from the least-squares beat grid through them, beats
    /// numbered at `period` seconds, and the grid's period.
    static func gridFit(_ times: [Double], period: Double) -> (deviation: Double, period: Double) {
        let numbers: [Double] = times.map { (($0 - times[0]) / period).rounded() }
        let count = Double(times.count)
        let meanN: Double = numbers.reduce(0, +) / count
        let meanT: Double = times.reduce(0, +) / count
        var covariance = 0.0, variance = 0.0
        for (number, time) in zip(numbers, times) {
            covariance += (number - meanN) * (time - meanT)
            variance += (number - meanN) * (number - meanN)
        }
        let slope = covariance / variance
        var deviation = 0.0
        for (number, time) in zip(numbers, times) {
            deviation = max(deviation, abs(meanT + slope * (number - meanN) - time))
        }
        return (deviation, slope)
    }

    @Test(arguments: [(120.0, 0.137), (170, 0.31), (84, 0.02)])
    func theBeatPhaseOfAClickTrackIsItsFirstClick(bpm: Double, offset: Double) throws {
        let audio = Self.clicks(bpm: bpm, seconds: 12, offset: offset)
        let first = try #require(BeatPhase.first(in: audio[...], sampleRate: Self.rate, bpm: bpm))
        #expect(abs(first - offset) < 0.004, "found \(first) s for \(offset) s")
    }

    @Test func theBeatPhaseOfADrumPatternIsOnItsKicks() throws {
        let offset = 0.23
        let audio = Synth.silence(seconds: offset, sampleRate: Double(Self.rate))
            + Synth.drumPattern(bpm: 128, seconds: 12, sampleRate: Double(Self.rate))
        let first = try #require(BeatPhase.first(in: audio[...], sampleRate: Self.rate, bpm: 128))
        #expect(abs(first - offset) < 0.006, "found \(first) s for \(offset) s")
    }

    @Test func noiseHasNoClearBeat() {
        let noise = Synth.whiteNoise(seconds: 12, sampleRate: Double(Self.rate))
        #expect(BeatPhase.first(in: noise[...], sampleRate: Self.rate, bpm: 120) == nil)
        let silence = Synth.silence(seconds: 12, sampleRate: Double(Self.rate))
        #expect(BeatPhase.first(in: silence[...], sampleRate: Self.rate, bpm: 120) == nil)
    }

    /// Two click tracks whose beats do not fall where a join by time would put them (a song at 84 BPM
    /// served at double time and one at 176 BPM, first clicks 0.23 and 0.41 s in), played at 170 and
    /// `incoming` BPM.
    static func render(
        placement: WorkoutRender.CrossfadePlacement, incoming: Double = 170, in directory: TemporaryDirectory
    ) throws -> (rendered: WorkoutRender.Rendered, samples: [Float]) {
        let slow = directory.file("slow.wav"), fast = directory.file("fast.wav")
        try AudioFileWriter(.wav16).write([clicks(bpm: 84, seconds: 20.3, offset: 0.23)], sampleRate: rate, to: slow)
        try AudioFileWriter(.wav16).write([clicks(bpm: 176, seconds: 20, offset: 0.41)], sampleRate: rate, to: fast)
        let output = directory.file("workout-\(placement).wav")
        let rendered = try WorkoutRender.render(
            [.init(file: slow, sourceBPM: 168, targetBPM: 170), .init(file: fast, sourceBPM: 176, targetBPM: incoming)],
            to: try OutputFile(path: output), placement: placement)
        return (rendered, try DecodedAudio(decoding: .file(output)).samples)
    }

    @Test func theClicksOfBothSongsStayOnOneBeatGridThroughTheCrossfade() throws {
        let directory = try TemporaryDirectory()
        let (rendered, samples) = try Self.render(placement: .onBeats, in: directory)
        #expect(rendered.pieces.map(\.joinedOnBeat) == [false, true])
        // The crossfade and 6 s either side of it.
        let join = rendered.pieces[1].start
        let around = Self.onsets(samples, sampleRate: Self.rate).filter { $0 > join - 6 && $0 < join + 2 + 6 }
        #expect(around.count > 30)
        let fit = Self.gridFit(around, period: 60 / 170)
        #expect(fit.deviation < 0.003, "onsets up to \(fit.deviation * 1000) ms off the grid")
        #expect(abs(fit.period - 60 / 170) < 0.0005, "grid period \(fit.period) s")
        // The incoming song starts on its first click, on a click of the outgoing song.
        #expect(around.contains { abs($0 - join) < 0.003 }, "no click at the join, \(join) s")
    }

    /// Into a song at another tempo, the grids differ, but the incoming song's grid starts on a beat
    /// of the outgoing one, at the join.
    @Test func anIncomingSongAtAnotherTempoStartsItsGridOnABeatOfTheOutgoingOne() throws {
        let directory = try TemporaryDirectory()
        let (rendered, samples) = try Self.render(placement: .onBeats, incoming: 176, in: directory)
        #expect(rendered.pieces.map(\.joinedOnBeat) == [false, true])
        let join = rendered.pieces[1].start
        let onsets = Self.onsets(samples, sampleRate: Self.rate)
        // Before the crossfade only the outgoing song sounds, after it only the incoming one.
        let before = onsets.filter { $0 > join - 8 && $0 < join }, after = onsets.filter { $0 > join + 2.05 && $0 < join + 10 }
        let outgoing = Self.gridFit(before, period: 60 / 170), incoming = Self.gridFit(after, period: 60 / 176)
        #expect(outgoing.deviation < 0.003 && incoming.deviation < 0.003, "\(outgoing.deviation) s, \(incoming.deviation) s")
        #expect(abs(incoming.period - 60 / 176) < 0.0005, "incoming period \(incoming.period) s")
        // Both grids, carried to the join, have a beat there (a few ms after it: the crossfade starts as
        // the onset-strength envelope rises), the same for both within a millisecond.
        func offset(_ grid: (deviation: Double, period: Double), through times: [Double]) -> Double {
            let numbers = times.map { (($0 - times[0]) / grid.period).rounded() }
            let mean = zip(numbers, times).map { $1 - $0 * grid.period }.reduce(0, +) / Double(times.count)
            let distance = (mean - join).truncatingRemainder(dividingBy: grid.period)
            return distance - (distance / grid.period).rounded() * grid.period
        }
        let outgoingBeat = offset(outgoing, through: before), incomingBeat = offset(incoming, through: after)
        #expect(abs(outgoingBeat) < 0.004 && abs(incomingBeat) < 0.004, "beats \(outgoingBeat) s and \(incomingBeat) s from the join")
        #expect(abs(outgoingBeat - incomingBeat) < 0.001, "the grids are \(outgoingBeat - incomingBeat) s apart at the join")
    }

    @Test func aJoinByTimeBreaksTheGridWhichIsWhatTheBeatsFix() throws {
        let directory = try TemporaryDirectory()
        let (rendered, samples) = try Self.render(placement: .byTime, in: directory)
        #expect(rendered.pieces.map(\.joinedOnBeat) == [false, false])
        let join = rendered.pieces[1].start
        let around = Self.onsets(samples, sampleRate: Self.rate).filter { $0 > join - 6 && $0 < join + 2 + 6 }
        #expect(Self.gridFit(around, period: 60 / 170).deviation > 0.03)
    }

    @Test func aSongWithoutAClearBeatIsJoinedByTime() throws {
        let directory = try TemporaryDirectory()
        let clicks = directory.file("clicks.wav"), noise = directory.file("noise.wav")
        try AudioFileWriter(.wav16).write([Self.clicks(bpm: 120, seconds: 20, offset: 0.1)], sampleRate: Self.rate, to: clicks)
        try AudioFileWriter(.wav16).write(
            [Synth.whiteNoise(seconds: 20, sampleRate: Double(Self.rate), amplitude: 0.3)], sampleRate: Self.rate, to: noise)
        let rendered = try WorkoutRender.render(
            [.init(file: clicks, sourceBPM: 120, targetBPM: 120), .init(file: noise, sourceBPM: 120, targetBPM: 120)],
            to: try OutputFile(path: directory.file("out.wav")))
        #expect(rendered.pieces.map(\.joinedOnBeat) == [false, false])
        #expect(abs(rendered.pieces[1].start - 18) < 0.01)
        #expect(abs(rendered.seconds - 38) < 0.01)
    }
}
