import ArgumentParser
import Foundation
import TactusAnalysis
import TactusAudio
import TactusStretch
import TactusTestSupport

/// `tactus-bench stretch`: songs rendered at target tempi, analysed again; rendering speed.
struct StretchBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stretch",
        abstract: "Stretched songs analysed again (target: within 1 %), and how many times faster than real time rendering runs.",
        discussion: """
            Synthesises a drum track at 120 BPM (44.1 kHz, --seconds long), renders it at each --target \
            with `SongStretch` (Rubber Band's faster engine), analyses each rendering with every built-in \
            detector and prints the consensus (at the octave nearest the target), its error, and the \
            rendering's speed in multiples of real time (output seconds per second of stretching).

            Then renders a workout of --workout-minutes (a third each at 150, 170 and 160 steps/min) \
            from synthesised songs at tempi 3 to 7 % away from their segment's (some at half time) \
            with `WorkoutRender`, analyses every song's stretch of the file, and prints the largest \
            error and the rendering's speed.
            """)

    @Option(help: "Length of the synthesised song in seconds.")
    var seconds: Double = 180

    @Option(help: "Target tempi (repeatable).")
    var target: [Double] = [112, 126, 170, 250]

    @Option(help: "Minutes of the rendered workout (songs of --seconds each at 150, 170 and 160 steps/min).")
    var workoutMinutes: Double = 30

    func validate() throws {
        guard seconds >= 10, seconds <= 3600 else { throw ValidationError("--seconds must be between 10 and 3600.") }
        guard target.allSatisfy({ (40...300).contains($0) }) else { throw ValidationError("--target must be in 40...300.") }
    }

    func run() throws {
        try songs()
        try workout()
    }

    private func songs() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-stretch")
        let song = directory.file("drums-120.flac")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 120, seconds: seconds, sampleRate: 44_100)], sampleRate: 44_100, to: song)
        for tempo in target {
            let output = directory.file("out-\(Int(tempo)).wav")
            let result = try SongStretch.render(song, targetBPM: tempo, output: try OutputFile(path: output), maxStretch: 0.5)
            let bpm = SongAnalyzer.builtin().analyze(.file(output)).consensus.bpm ?? .nan
            let measured = [0.5, 1, 2].map { bpm * $0 }.min { abs($0 - tempo) < abs($1 - tempo) } ?? bpm
            print(String(
                format: "target %.1f BPM (from %.2f × %.1f, ratio %.4f): measured %.2f BPM, error %.2f %%; %.1f s rendered "
                    + "in %.2f s (%.0fx real time)",
                tempo, result.sourceBPM, result.factor, result.tempoRatio, measured, 100 * abs(measured - tempo) / tempo,
                result.outputSeconds, result.stretchSeconds, result.outputSeconds / result.stretchSeconds))
        }
    }

    private func workout() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-workout")
        let segment = workoutMinutes * 60 / 3
        var pieces: [WorkoutRender.Piece] = []
        for cadence in [150.0, 170, 160] {
            var filled = 0.0
            while filled < segment {
                let index = pieces.count
                // 3 to 7 % away from the cadence, alternately slower and faster; every third song at half time.
                let offset = (0.03 + 0.01 * Double(index % 5)) * (index % 2 == 0 ? -1 : 1)
                let tempo = cadence * (1 + offset) / (index % 3 == 2 ? 2 : 1)
                let file = directory.file("song-\(index).flac")
                try AudioFileWriter(.flac).write(
                    [Synth.drumPattern(bpm: tempo, seconds: seconds, sampleRate: 44_100, seed: UInt64(index + 1))],
                    sampleRate: 44_100, to: file)
                pieces.append(WorkoutRender.Piece(file: file, sourceBPM: tempo * (index % 3 == 2 ? 2 : 1), targetBPM: cadence))
                filled += seconds * (1 + offset)
            }
        }
        let output = directory.file("workout.wav")
        let rendered = try WorkoutRender.render(pieces, to: try OutputFile(path: output))
        let audio = try DecodedAudio(decoding: .file(output))
        var worst = 0.0
        for (index, piece) in rendered.pieces.enumerated() {
            let from = Int((piece.start + 2) * 44_100), to = min(audio.samples.count, Int((piece.start + piece.duration - 2) * 44_100))
            let cut = directory.file("cut-\(index).wav")
            try AudioFileWriter(.wav16).write([Array(audio.samples[from..<to])], sampleRate: 44_100, to: cut)
            let bpm = SongAnalyzer.builtin().analyze(.file(cut)).consensus.bpm ?? .nan
            let measured = [0.5, 1, 2].map { bpm * $0 }.min { abs($0 - piece.targetBPM) < abs($1 - piece.targetBPM) } ?? bpm
            worst = max(worst, abs(measured - piece.targetBPM) / piece.targetBPM)
        }
        print(String(
            format: "workout: %d songs, %.1f min rendered in %.1f s (%.0fx real time); largest tempo error %.2f %%",
            rendered.pieces.count, rendered.seconds / 60, rendered.renderSeconds, rendered.seconds / rendered.renderSeconds,
            100 * worst))
    }
}
