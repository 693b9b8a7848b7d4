import Foundation
import Testing
import TactusDetector
import TactusTestSupport

@testable import BeatNetDetector

/// The comb-filter tempo and the tempo-and-position beat tracker, on activations and drums
/// synthesised here.
@Suite struct BeatTrackingTests {
    /// An activation of `count` frames with a pulse (a frame at 1, its neighbours at 0.3) at
    /// each of `beats` (frames, rounded).
    static func pulses(at beats: [Double], count: Int) -> [Float] {
        var activation = [Float](repeating: 0.01, count: count)
        for beat in beats {
            let frame = Int(beat.rounded())
            guard frame < count else { continue }
            activation[frame] = 1
            if frame > 0 { activation[frame - 1] = 0.3 }
            if frame + 1 < count { activation[frame + 1] = 0.3 }
        }
        return activation
    }

    @Test func theStrongestCombFilterIsThePulsesPeriodNotItsMultiple() {
        // 128 bpm at 200 frames per second: a pulse every 93.75 frames.
        let period = 200 * 60 / 128.0
        let activation = Self.pulses(at: stride(from: 10, to: 6_000, by: period).map { $0 }, count: 6_000)
        let bank = ResonatingCombFilters(alpha: 0.79, delays: 60...200)
        let winners = bank.winners(activation)
        let histogram = DelayHistogram(
            bank.histogram(winners, frames: 0..<activation.count), firstDelay: 60, frameRate: 200, smoothing: 7)
        let best = try! #require(histogram.peaks.first)
        #expect(abs(best.bpm - 128) < 128 * 0.01, "\(histogram.peaks.prefix(3))")
    }

    /// The bank computes 8 frames at a time where the delay allows it; its winners must be the
    /// filters' definition computed frame by frame, for delays on both sides of 8 and a length
    /// that is not a multiple of 8.
    @Test func theCombFiltersAreTheirDefinitionFrameByFrame() {
        var generator = SystemRandomNumberGenerator()
        let activation = (0..<1_003).map { _ in Float.random(in: 0...1, using: &generator) }
        let bank = ResonatingCombFilters(alpha: 0.79, delays: 2...40)
        let found = bank.winners(activation)
        var bestOutput = [Float](repeating: 0, count: activation.count), bestDelay = [Int32](repeating: 0, count: activation.count)
        for delay in bank.delays {
            var y = [Float](repeating: 0, count: activation.count)
            for frame in activation.indices {
                y[frame] = activation[frame] + (frame >= delay ? 0.79 * y[frame - delay] : 0)
                if y[frame] > bestOutput[frame] {
                    bestOutput[frame] = y[frame]
                    bestDelay[frame] = Int32(delay)
                }
            }
        }
        let wrong = activation.indices.filter { found.outputs[$0] != bestOutput[$0] || found.delays[$0] != bestDelay[$0] }
        #expect(wrong.isEmpty, "\(wrong.count) frames differ, first \(wrong.prefix(5))")
    }

    @Test func theTrackerFollowsATempoThatChanges() {
        // 100 frames per second; the beat interval goes from 50 frames (120 bpm) to 40 (150 bpm).
        var beats = [Double](), time = 7.0
        while time < 3_000 {
            beats.append(time)
            time += 50 - 10 * min(time / 3_000, 1)
        }
        let activation = Self.pulses(at: beats, count: 3_000)
        let found = BeatTracker().beats(activation, intervals: 35...60)
        let expected = beats.map { Int($0.rounded()) }
        #expect(found.count == expected.count)
        let misplaced = zip(found, expected).filter { abs($0 - $1) > 1 }
        #expect(misplaced.isEmpty, "\(misplaced.prefix(5))")
    }

    /// The tempo is held firmly (a change of more than 3 % from one beat to the next is not
    /// considered), yet a sudden step from 120 to 150 bpm is followed within a second: the
    /// path, decoded over the whole song, ramps across the step, and only the beats next to
    /// it are missed.
    @Test func aSuddenStepOfTempoCostsOnlyTheBeatsNextToIt() {
        let rate = 200.0, seconds = 60.0
        var beats = [Double](), time = 0.5
        while time < seconds {
            beats.append(time)
            time += time < 30 ? 0.5 : 0.4
        }
        let activation = Self.pulses(at: beats.map { $0 * rate }, count: Int(seconds * rate))
        let found = BeatTracker().beats(activation, intervals: 70...130).map { Double($0) / rate }
        let missed = beats.filter { beat in beat > 2 && beat < seconds - 1 && !found.contains { abs($0 - beat) <= 0.07 } }
        #expect(missed.count <= 4 && missed.allSatisfy { abs($0 - 30) < 1 }, "\(missed)")
    }

    /// A steady 177 bpm at the tracker's 200 frames per second lies between beat intervals of
    /// 67 and 68 frames; for 20 s in the middle the off-beats are marked more strongly than the
    /// beats (as a network marks an open hi-hat on the "and"). The tracker keeps the beat
    /// through that section rather than drifting to the off-beat and back (with the tempo held
    /// as loosely as before beatnet 1.5.0, at 100 frames per second, it did drift).
    @Test func aSteadyTempoKeepsItsBeatThroughASectionOfStrongerOffBeats() {
        let rate = 200.0, period = rate * 60 / 177
        let count = Int(90 * rate)
        var activation = [Float](repeating: 0.02, count: count)
        let beats = stride(from: 20, to: Double(count) - period, by: period).map { $0 }
        for beat in beats {
            let section = (30...50).contains(beat / rate)
            for (time, strength) in [(beat, section ? 0.5 : 0.9), (beat + period / 2, section ? 0.9 : 0.2)] {
                let frame = Int(time.rounded())
                activation[frame] = Float(strength)
                activation[frame - 1] = Float(strength / 3)
                activation[frame + 1] = Float(strength / 3)
            }
        }
        let found = BeatTracker().beats(activation, intervals: 52...88)
        let missed = beats.filter { beat in beat > 2 * rate && !found.contains { abs(Double($0) - beat) <= 2 } }
        #expect(missed.isEmpty, "\(missed.count) of \(beats.count) beats missed, from \(missed.first.map { $0 / rate } ?? 0) s")
    }

    /// From 40 s to the end the network marks the off-beats (0.9) far more strongly than the
    /// beats (0.3), as it does on an open hi-hat or a skank, while the other instruments'
    /// onsets stay on the beat. On the activation alone the tracker follows the off-beats;
    /// on what the session gives it, the activation and the scaled flux together, it keeps
    /// the beat.
    @Test func onsetsOnTheBeatKeepTheTrackerThereWhereTheActivationMarksTheOffBeats() {
        let rate = 200.0, period = rate * 60 / 128
        let count = Int(90 * rate)
        var activation = [Float](repeating: 0.02, count: count), flux = [Float](repeating: 0.05, count: count)
        let beats = stride(from: 20, to: Double(count) - period, by: period).map { $0 }
        func mark(_ values: inout [Float], at time: Double, _ strength: Double) {
            let frame = Int(time.rounded())
            values[frame] = Float(strength)
            values[frame - 1] = Float(strength / 3)
            values[frame + 1] = Float(strength / 3)
        }
        for beat in beats {
            let late = beat / rate > 40
            mark(&activation, at: beat, late ? 0.3 : 0.9)
            mark(&activation, at: beat + period / 2, late ? 0.9 : 0.2)
            mark(&flux, at: beat, 4)
            mark(&flux, at: beat + period / 2, 1)
        }
        let late = beats.filter { $0 / rate > 42 }
        func missed(_ found: [Int]) -> Int { late.filter { beat in !found.contains { abs(Double($0) - beat) <= 2 } }.count }
        let tracker = BeatTracker()
        #expect(missed(tracker.beats(activation, intervals: 72...122)) > late.count / 2)
        let input = BeatNetSession.trackerInput(activation: activation, flux: flux, onsetWeight: 1)
        #expect(input.allSatisfy { (0...1).contains($0) })
        #expect(missed(tracker.beats(input, intervals: 72...122)) == 0)
    }

    @Test func drumsSpeedingUpFrom100To130BpmAreTrackedBeatByBeat() throws {
        let detector = try BeatNetDetector(parameters: BeatNetDetector.descriptor.resolve(ParameterSet()))
        let seconds = 40.0
        let audio = Synth.drumPattern(bpm: 100, seconds: seconds, sampleRate: 22_050, pattern: .backbeat, endBPM: 130)
        let expected = Synth.beatTimes(startBPM: 100, endBPM: 130, seconds: seconds + 8).filter { $0 > 2 && $0 < seconds - 1 }
        let found = try #require(detector.analyze(audio, sampleRate: 22_050).beats).times
        let missed = expected.filter { beat in !found.contains { abs($0 - beat) <= 0.07 } }
        #expect(missed.count <= expected.count / 20, "missed \(missed.count) of \(expected.count): \(missed.prefix(8))")
        let extra = found.filter { time in time > 2 && time < seconds - 1 && !expected.contains { abs($0 - time) <= 0.07 } }
        #expect(extra.count <= expected.count / 20, "\(extra.count) beats off the pattern: \(extra.prefix(8))")
    }
}
