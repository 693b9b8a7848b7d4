import Foundation
import TactusAnalysis
import TactusAudio
import TactusDSP
import TactusDetector
import TactusTestSupport
import Testing

/// The rate detectors declare (``DetectorDescriptor/analysisSampleRate``): the song resampled
/// once per rate for every detector at that rate, and decoded at a lower rate when every
/// detector of the analysis allows it.
@Suite struct AnalysisRateTests {
    static func beatnet(_ parameters: ParameterSet = ParameterSet()) throws -> any TempoDetector {
        try BuiltinDetectors.registry.make("beatnet", parameters: parameters)
    }

    @Test func twoDetectorsAtOneRateShareOneResampling() throws {
        let first = try Self.beatnet(), second = try Self.beatnet(ParameterSet(["comb_alpha": .number(0.7)]))
        #expect(first.descriptor.analysisSampleRate == 22_050)
        let frontEnds = SharedFrontEnds()
        let format = SignalFormat(sampleRate: 44_100, expectedFrames: nil)
        _ = first.makeSession(format: format, frontEnds: frontEnds)
        _ = second.makeSession(format: format, frontEnds: frontEnds)
        let key = ResampledSignal.Key(inputRate: 44_100, outputRate: 22_050)
        var made = false
        _ = frontEnds.shared(key) { made = true; return ResampledSignal(key: key) }
        #expect(!made, "the first session made the song at 22,050 Hz, the second took it")
    }

    @Test func detectorsSharingTheResampledSongFindWhatEachFindsAlone() throws {
        let signal = Synth.drumPattern(bpm: 117, seconds: 30, sampleRate: 48_000, pattern: .backbeat)
        let detectors = [try Self.beatnet(), try Self.beatnet(ParameterSet(["comb_alpha": .number(0.7)]))]
        let together = SongAnalyzer(detectors: detectors).analyze(samples: signal, sampleRate: 48_000, blockSize: 3000).analyses
        for (detector, shared) in zip(detectors, together) {
            let alone = detector.analyze(signal, sampleRate: 48_000, blockSize: 3000)
            #expect(shared.bpm == alone.bpm)
            #expect(shared.candidates == alone.candidates)
            #expect(shared.windows == alone.windows)
            #expect(shared.beats == alone.beats)
        }
    }

    @Test func theDecoderMayLowerTheRateOnlyWhenEveryDetectorAllows() throws {
        let all = try BuiltinDetectors.registry.names.map { try BuiltinDetectors.registry.make($0) }
        #expect(SongAnalyzer.neededSampleRate([try Self.beatnet()]) == 22_050)
        #expect(SongAnalyzer.neededSampleRate(all) == nil)  // the DSP detectors read the whole band
        #expect(SongAnalyzer(detectors: [try Self.beatnet()]).decoding.minimumSampleRate == 22_050)
        #expect(SongAnalyzer(detectors: all).decoding.minimumSampleRate == nil)
    }

    /// beatnet alone on a 44.1 kHz MP3: libmpg123 synthesises it at 22,050 Hz, and the tempo
    /// and beats are those of the full-rate decoding resampled by libsoxr.
    @Test func anMP3DecodedAtHalfItsRateGivesTheSameTempo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("song.mp3")
        let left = Synth.drumPattern(bpm: 126, seconds: 40, sampleRate: 44_100, pattern: .backbeat)
        try AudioFileWriter(.mp3(.constant)).write([left, left], sampleRate: 44_100, to: path)
        let stream = try AudioStream(.file(path), options: SongAnalyzer(detectors: [try Self.beatnet()]).decoding)
        #expect(stream.sampleRate == 22_050)
        let lower = SongAnalyzer(detectors: [try Self.beatnet()]).analyze(.file(path))
        let full = SongAnalyzer(detectors: [try Self.beatnet()], decoding: DecodingOptions(minimumSampleRate: 44_100)).analyze(.file(path))
        let lowerBPM = try #require(lower.analyses.first?.bpm), fullBPM = try #require(full.analyses.first?.bpm)
        #expect(abs(lowerBPM - 126) / 126 < 0.02 && abs(lowerBPM - fullBPM) / fullBPM < 0.005, "\(lowerBPM) vs \(fullBPM)")
        #expect(lower.metadata?.sampleRate == 44_100)
        let lowerBeats = lower.analyses.first?.beats?.times ?? [], fullBeats = full.analyses.first?.beats?.times ?? []
        #expect(abs(lowerBeats.count - fullBeats.count) <= 1)
    }
}
