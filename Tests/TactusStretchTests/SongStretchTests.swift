import Foundation
import TactusAnalysis
import TactusStretch
import TactusTestSupport
import Testing

/// Songs rendered at a target tempo, analysed again by Tactus.
@Suite struct SongStretchTests {
    static func song(bpm: Double, in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("drums-\(Int(bpm)).flac")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: bpm, seconds: 30, sampleRate: 22_050)], sampleRate: 22_050, to: path)
        return path
    }

    /// The consensus of the built-in detectors on `file`, taken at the octave nearest `target`.
    static func tempo(of file: String, near target: Double) throws -> Double {
        let bpm = try #require(SongAnalyzer.builtin().analyze(.file(file)).consensus.bpm)
        return [0.5, 1, 2].map { bpm * $0 }.min { abs($0 - target) < abs($1 - target) } ?? bpm
    }

    @Test(arguments: [(120.0, 126.0), (120, 112), (100, 204)])
    func theStretchedSongIsWithinOnePercentOfItsTarget(source: Double, target: Double) throws {
        let directory = try TemporaryDirectory()
        let song = try Self.song(bpm: source, in: directory)
        let output = directory.file("out.wav")
        let result = try SongStretch.render(song, targetBPM: target, output: output)
        #expect(abs(result.sourceBPM * result.factor - source * result.factor) < 0.01 * source)
        #expect(abs(result.outputSeconds - 30 / result.tempoRatio) < 0.1)
        let measured = try Self.tempo(of: output, near: target)
        #expect(abs(measured - target) <= 0.01 * target, "measured \(measured) for \(target)")
        // Rendering is much faster than real time.
        #expect(result.stretchSeconds * 20 < result.outputSeconds)
    }

    @Test func aSongTooFarFromTheTargetIsRefused() throws {
        let directory = try TemporaryDirectory()
        let song = try Self.song(bpm: 120, in: directory)
        #expect(throws: StretchError.tooFar(file: song, bpm: 140, target: 160, maxStretch: 0.08)) {
            try SongStretch.render(song, targetBPM: 160, output: directory.file("out.wav"), sourceBPM: 140)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("out.wav")))
    }

    @Test(arguments: [(TimeStretcher.Engine.faster, 22_050), (.finer, 22_050), (.faster, 44_100)])
    func theStretcherKeepsThePitchAtAnyOutputRate(engine: TimeStretcher.Engine, outputRate: Int) {
        // A 440 Hz tone 10 % faster: 10 % shorter, still 440 Hz (zero crossings per second).
        let rate = 22_050
        let tone = (0..<(rate * 4)).map { Float(sin(2 * Double.pi * 440 * Double($0) / Double(rate))) * 0.5 }
        let faster = TimeStretcher.stretch(tone, sampleRate: rate, tempoRatio: 1.1, outputRate: outputRate, engine: engine)
        #expect(abs(Double(faster.count) / Double(outputRate) - 4 / 1.1) < 0.05)
        let middle = faster[(faster.count / 4)..<(faster.count * 3 / 4)]
        let crossings = zip(middle.dropFirst(), middle).filter { $0 >= 0 && $1 < 0 }.count
        let frequency = Double(crossings) / (Double(middle.count) / Double(outputRate))
        #expect(abs(frequency - 440) < 5, "\(frequency) Hz")
    }
}
