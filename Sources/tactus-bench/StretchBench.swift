import ArgumentParser
import Foundation
import TactusAnalysis
import TactusStretch
import TactusTestSupport

/// `tactus-bench stretch`: songs rendered at target tempi, analysed again; rendering speed.
struct StretchBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stretch",
        abstract: "Stretched songs analysed again (target: within 1 %), and how many times faster than real time rendering runs.",
        discussion: """
            Synthesises a drum track at 120 BPM (44.1 kHz, --seconds long), renders it at each --target \
            with `SongStretch` (Rubber Band, R3 engine), analyses each rendering with every built-in \
            detector and prints the consensus (at the octave nearest the target), its error, and the \
            rendering's speed in multiples of real time (output seconds per second of stretching).
            """)

    @Option(help: "Length of the synthesised song in seconds.")
    var seconds: Double = 180

    @Option(help: "Target tempi (repeatable).")
    var target: [Double] = [112, 126, 170, 250]

    func validate() throws {
        guard seconds >= 10, seconds <= 3600 else { throw ValidationError("--seconds must be between 10 and 3600.") }
        guard target.allSatisfy({ (40...300).contains($0) }) else { throw ValidationError("--target must be in 40...300.") }
    }

    func run() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-stretch")
        let song = directory.file("drums-120.flac")
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 120, seconds: seconds, sampleRate: 44_100)], sampleRate: 44_100, to: song)
        for tempo in target {
            let output = directory.file("out-\(Int(tempo)).wav")
            let result = try SongStretch.render(song, targetBPM: tempo, output: output, maxStretch: 0.5)
            let bpm = SongAnalyzer.builtin().analyze(.file(output)).consensus.bpm ?? .nan
            let measured = [0.5, 1, 2].map { bpm * $0 }.min { abs($0 - tempo) < abs($1 - tempo) } ?? bpm
            print(String(
                format: "target %.1f BPM (from %.2f × %.1f, ratio %.4f): measured %.2f BPM, error %.2f %%; %.1f s rendered "
                    + "in %.2f s (%.0fx real time)",
                tempo, result.sourceBPM, result.factor, result.tempoRatio, measured, 100 * abs(measured - tempo) / tempo,
                result.outputSeconds, result.stretchSeconds, result.outputSeconds / result.stretchSeconds))
        }
    }
}
