import Foundation
import Testing
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusModel
import TactusTestSupport

@Suite struct SongAnalyzerTests {
    /// The same music at three sample rates, mono and stereo, gives the same tempo (0.5 %),
    /// with both presets of the comb filter.
    @Test func resultsDoNotDependOnSampleRateOrChannels() throws {
        let detectors = [try TestSongs.combFilter("default"), try TestSongs.combFilter("classic")]
        var found: [String: [Double?]] = [:]
        for rate in [22_050, 44_100, 48_000] {
            let music = Synth.drumPattern(bpm: 126, seconds: 12, sampleRate: Double(rate), pattern: .backbeat)
            for channels in [[music], [music, music.map { $0 * 0.5 }]] {
                let result = try TestSongs.analyze(channels, sampleRate: rate, detectors: detectors)
                found["\(rate) Hz, \(channels.count) ch"] = result.analyses.map(\.bpm)
            }
        }
        let reference = try #require(found["44100 Hz, 1 ch"])
        for (label, tempi) in found {
            for (preset, (bpm, expected)) in zip(["default", "classic"], zip(tempi, reference)) {
                let value = try #require(bpm), target = try #require(expected)
                #expect(abs(value - target) <= 0.005 * target, "\(preset) \(label): \(value) vs \(target)")
            }
        }
    }

    /// NaN and infinite samples are silenced once, before the envelope and the detectors (told
    /// that their samples are finite) see them: every default detector finds the clean song's
    /// tempo and the envelope stays finite.
    @Test func nonFiniteSamplesAreSilencedForEveryDetectorAndTheEnvelope() throws {
        let rate = 22_050.0
        let clean = Synth.drumPattern(bpm: 118, seconds: 14, sampleRate: rate, pattern: .backbeat)
        var damaged = clean
        for index in stride(from: 700, to: damaged.count, by: 15_000) {
            damaged[index] = .nan
            damaged[index + 5] = .infinity
        }
        let analyzer = SongAnalyzer.builtin()
        let expected = analyzer.analyze(samples: clean, sampleRate: rate)
        let found = analyzer.analyze(samples: damaged, sampleRate: rate)
        #expect(found.envelope.values.allSatisfy { $0.isFinite })
        for (analysis, reference) in zip(found.analyses, expected.analyses) {
            let bpm = try #require(analysis.bpm, "\(analysis.detector) found no tempo")
            let target = try #require(reference.bpm)
            #expect(abs(bpm - target) <= 0.005 * target, "\(analysis.detector): \(bpm) vs \(target)")
            #expect(analysis.confidence.isFinite && analysis.windows.allSatisfy { $0.energy.isFinite })
        }
    }

    @Test func aSongGetsItsIdentityEnvelopeWindowsAndConsensus() throws {
        let seconds = 20.0
        let music = Synth.drumPattern(bpm: 120, seconds: seconds, sampleRate: 44_100, pattern: .fourOnTheFloor)
        let result = try TestSongs.analyze([music], sampleRate: 44_100)
        #expect(result.error == nil)
        #expect(result.song != nil)
        #expect(abs((result.durationSeconds ?? 0) - seconds) < 0.01)
        #expect(result.analyses.map(\.detector) == BuiltinDetectors.registry.names)

        let envelope = try #require(result.envelope)
        #expect(abs(envelope.hopS - 1024 / 44_100) < 1e-9)
        #expect(envelope.values.count == Int((seconds * 44_100 / 1024).rounded(.up)))
        #expect(envelope.values.allSatisfy { $0 >= 0 } && envelope.values.contains { $0 > 1e-3 })

        let comb = try #require(result.analyses.first { $0.detector == "comb-filter" })
        // The default windows: 12 s every 3 s, plus one ending at the song's end.
        #expect(comb.windows.map(\.startS) == [0, 3, 6, 8])
        #expect(comb.windows.allSatisfy { abs($0.durationS - 12) < 0.02 && $0.energy > 0 && $0.bpm != nil })
        #expect(comb.seconds > 0)
        #expect(comb.version == BuiltinDetectors.registry.descriptor(named: "comb-filter")?.version)
        let consensus = try #require(result.consensus.bpm)
        #expect(abs(consensus - 120) < 1.2)
        #expect(result.consensus.detectors.contains("comb-filter"))
    }

    @Test func aWindowsEnergyIsTheMeanSquareOfItsSamples() throws {
        // 8 s of drums, then the same 8 s at half the amplitude: the windows' energies follow.
        let rate = 22_050.0
        let loud = Synth.drumPattern(bpm: 100, seconds: 8, sampleRate: rate)
        let music = loud + loud.map { $0 * 0.5 }
        let comb = try TestSongs.combFilter("default", ["window_s": .number(8), "hop_s": .number(4)])
        let result = try TestSongs.analyze([music], sampleRate: 22_050, format: .wavFloat, detectors: [comb])
        let windows = try #require(result.analyses.first?.windows)
        #expect(windows.map(\.startS) == [0, 4, 8])
        let first = music[0..<Int(8 * rate)].reduce(0.0) { $0 + Double($1) * Double($1) } / (8 * rate)
        #expect(abs(windows[0].energy - first) < 1e-3 * first)
        #expect(abs(windows[2].energy / windows[0].energy - 0.25) < 0.01)
        #expect(abs(windows[1].energy / windows[0].energy - 0.625) < 0.01)
    }

    @Test func aFileThatCannotBeDecodedGetsItsErrorAndNoAnalyses() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-analysis-test")
        let path = directory.file("not-audio.mp3")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 10_000)))
        let result = SongAnalyzer.builtin().analyze(.file(path))
        #expect(result.error != nil)
        #expect(result.analyses.isEmpty)
        #expect(result.consensus.bpm == nil)
        let missing = SongAnalyzer.builtin().analyze(.file(directory.file("missing.wav")))
        #expect(missing.error?.code == .unreadable)
    }

    /// Past its time limit an analysis stops between blocks with a `timeout` naming the song and
    /// the limit; within it, the same song is analysed as without one.
    @Test func anAnalysisPastItsTimeLimitStopsWithTimeout() throws {
        let music = Synth.clickTrack(bpm: 120, seconds: 20, sampleRate: 22_050)
        let bytes = try AudioFileWriter(.wav16).encode([music], sampleRate: 22_050)
        let detectors = [try TestSongs.combFilter()]
        let stopped = SongAnalyzer(detectors: detectors, timeLimit: .zero).analyze(.bytes(bytes, name: "clicks.wav"))
        let error = try #require(stopped.error)
        #expect(error.code == .timeout)
        #expect(error.message.hasPrefix("clicks.wav: the analysis was stopped at its time limit of 0 s"), "\(error.message)")
        #expect(stopped.analyses.isEmpty)

        let unlimited = SongAnalyzer(detectors: detectors).analyze(.bytes(bytes, name: "clicks.wav"))
        let generous = SongAnalyzer(detectors: detectors, timeLimit: .seconds(600)).analyze(.bytes(bytes, name: "clicks.wav"))
        #expect(generous.error == nil)
        #expect(generous.analyses.map(\.bpm) == unlimited.analyses.map(\.bpm))
        #expect(TempoOctave.matches(generous.analyses.first?.bpm, 120))
    }
}
