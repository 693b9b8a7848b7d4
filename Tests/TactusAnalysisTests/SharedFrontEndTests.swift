import Foundation
import TactusAnalysis
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

/// Detectors analysed together share the front ends they compute alike (the comb filter's and
/// the autocorrelation's spectrogram), which must change nothing they find.
@Suite struct SharedFrontEndTests {
    @Test(arguments: [44_100.0, 22_050.0])
    func detectorsSharingASpectrogramFindExactlyWhatEachFindsAlone(sampleRate: Double) throws {
        let signal = Synth.drumPattern(bpm: 123, seconds: 30, sampleRate: sampleRate, pattern: .backbeat)
        let detectors = try BuiltinDetectors.registry.names.map { try BuiltinDetectors.registry.make($0) }
        let together = SongAnalyzer(detectors: detectors).analyze(samples: signal, sampleRate: sampleRate, blockSize: 3000).analyses
        #expect(together.count == detectors.count)
        for (detector, shared) in zip(detectors, together) {
            let alone = detector.analyze(signal, sampleRate: sampleRate, blockSize: 3000)
            #expect(shared.bpm == alone.bpm, "\(detector.descriptor.name)")
            #expect(shared.confidence == alone.confidence, "\(detector.descriptor.name)")
            #expect(shared.candidates == alone.candidates, "\(detector.descriptor.name)")
            #expect(shared.windows == alone.windows, "\(detector.descriptor.name)")
        }
    }

    @Test func aFrontEndIsMadeOncePerKeyAndSong() {
        let frontEnds = SharedFrontEnds()
        final class Box {}
        var made = 0
        let first = frontEnds.shared("spectrogram-100Hz") { made += 1; return Box() }
        let second = frontEnds.shared("spectrogram-100Hz") { made += 1; return Box() }
        let other = frontEnds.shared("spectrogram-50Hz") { made += 1; return Box() }
        #expect(first === second && first !== other && made == 2)
        #expect(SharedFrontEnds().shared("spectrogram-100Hz") { Box() } !== first, "a new song shares nothing")
    }
}

/// A worker is told its song's id by the JOB: the analysis takes it instead of hashing the
/// bytes again.
@Suite struct KnownSongIDTests {
    @Test func aKnownSongIDIsTakenNotComputed() throws {
        let bytes = try TestSong.clickTrack(bpm: 120, seconds: 8)
        let analyzer = SongAnalyzer(detectors: [try BuiltinDetectors.registry.make("comb-filter")])
        let told = SongID(hashing: Array("told by the job".utf8))
        #expect(analyzer.analyze(.bytes(bytes, name: "a.wav"), song: told).song == told)
        #expect(analyzer.analyze(.bytes(bytes, name: "a.wav")).song == SongID(hashing: bytes))
    }
}
