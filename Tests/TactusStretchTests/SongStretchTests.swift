import Foundation
import TactusAnalysis
import TactusAudio
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
        let result = try SongStretch.render(song, targetBPM: target, output: try OutputFile(path: output))
        #expect(abs(result.sourceBPM * result.factor - source * result.factor) < 0.01 * source)
        #expect(abs(result.outputSeconds - 30 / result.tempoRatio) < 0.1)
        let measured = try Self.tempo(of: output, near: target)
        #expect(abs(measured - target) <= 0.01 * target, "measured \(measured) for \(target)")
        // How much faster than real time rendering runs is measured by `tactus-bench stretch`, not here.
        #expect(result.stretchSeconds > 0)
    }

    @Test func aSongTooFarFromTheTargetIsRefused() throws {
        let directory = try TemporaryDirectory()
        let song = try Self.song(bpm: 120, in: directory)
        #expect(throws: StretchError.tooFar(file: song, bpm: 140, target: 160, maxStretch: 0.08)) {
            try SongStretch.render(song, targetBPM: 160, output: try OutputFile(path: directory.file("out.wav")), sourceBPM: 140)
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

/// Playlists rendered as one file, each song at its segment's tempo.
@Suite struct WorkoutRenderTests {
    @Test func eachSongPlaysAtItsSegmentsTempoAndSongsCrossfade() throws {
        let directory = try TemporaryDirectory()
        let slow = directory.file("slow.flac"), fast = directory.file("fast.wav")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 84, seconds: 30, sampleRate: 22_050)], sampleRate: 22_050, to: slow)
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 120, seconds: 30, sampleRate: 44_100)], sampleRate: 44_100, to: fast)
        let output = directory.file("workout.wav")
        // The song at 84 serves a cadence of 170 at double time. Joined by time, at the end of the first song.
        let rendered = try WorkoutRender.render(
            [.init(file: slow, sourceBPM: 168, targetBPM: 170), .init(file: fast, sourceBPM: 120, targetBPM: 125)],
            to: try OutputFile(path: output), placement: .byTime)
        #expect(rendered.sampleRate == 22_050)
        let first = 30 * 168 / 170.0, second = 30 * 120 / 125.0
        #expect(abs(rendered.seconds - (first + second - 2)) < 0.1)
        #expect(abs(rendered.pieces[1].start - (first - 2)) < 0.05)
        #expect(rendered.renderSeconds > 0)  // the speed: `tactus-bench stretch`

        // Each song's stretch of the file, analysed again, is at its target within 1 %.
        let audio = try DecodedAudio(decoding: .file(output))
        #expect(abs(Double(audio.samples.count) / 22_050 - rendered.seconds) < 0.01)
        for (index, piece) in rendered.pieces.enumerated() {
            let from = Int((piece.start + 2) * 22_050), to = Int((piece.start + piece.duration - 2) * 22_050)
            let cut = directory.file("piece-\(index).wav")
            try AudioFileWriter(.wav16).write([Array(audio.samples[from..<to])], sampleRate: 22_050, to: cut)
            let measured = try SongStretchTests.tempo(of: cut, near: piece.targetBPM)
            #expect(abs(measured - piece.targetBPM) <= 0.01 * piece.targetBPM, "piece \(index): \(measured)")
        }
    }

    @Test func aSongThatDoesNotDecodeIsAnErrorNamingIt() throws {
        let directory = try TemporaryDirectory()
        let notes = directory.file("notes.mp3")
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: notes))
        do {
            _ = try WorkoutRender.render([.init(file: notes, sourceBPM: 120, targetBPM: 125)], to: try OutputFile(path: directory.file("out.wav")))
            Issue.record("rendered a text file")
        } catch {
            #expect(error.description.hasPrefix(notes))
        }
    }
}
