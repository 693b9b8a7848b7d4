import ArgumentParser
import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusStretch

extension Tactus {
    /// `tactus beats FILE`: where the beats of a song fall.
    struct Beats: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "beats",
            abstract: "Print the beat times (and downbeats) of an audio file; optionally write a click track over it.",
            discussion: """
                The song is analysed by beatnet, whose beats come from its tempo-and-position model \
                on the learned beat activation. When beatnet finds no beats (or with --grid), the \
                beats are the constant grid every analysis fits: the consensus tempo of the default \
                detectors refined to the song's onsets, from the phase where they are strongest, \
                marked "constant grid" (`analyze` prints it as "beat grid").

                Prints the source and tempo, then one beat time in seconds a line, downbeats \
                followed by " downbeat". With --json, one object: {file, source ("beatnet" or \
                "constant-grid"), bpm, beats [seconds], downbeats [seconds]}. With --click OUT.wav, \
                also writes the song (mono) with a click on each beat (higher on downbeats).

                Exit status: 0 when beats were found, 1 when the song could not be read or has \
                no beat, 2 on usage errors.
                """
        )

        @Argument(help: ArgumentHelp("The audio file.", valueName: "file"))
        var file: String

        @Flag(help: "Use the constant grid of the consensus tempo even when beatnet tracks beats.")
        var grid = false

        @Flag(help: "Print one JSON object.")
        var json = false

        @Option(help: ArgumentHelp("Also write the song with a click on each beat to this WAV file.", valueName: "path"))
        var click: String?

        @Flag(help: "With --click: replace the WAV file if it exists.")
        var replace = false

        /// What `beats` prints with --json.
        struct Report: Encodable {
            var file: String
            var source: String
            var bpm: Double
            var beats: [Double]
            var downbeats: [Double]
        }

        func run() throws {
            let decoded: DecodedAudio
            do {
                decoded = try DecodedAudio(decoding: .file(file))
            } catch {
                throw CommandFailure("\(file): \(error)")
            }
            let report = try locate(in: decoded)
            if let click {
                do {
                    try ClickTrack.write(
                        decoded.samples, sampleRate: decoded.sampleRate, beats: report.beats, downbeats: report.downbeats,
                        to: click, replacing: replace, sparing: [file])
                } catch {
                    throw CommandFailure("\(click): \(error)")
                }
            }
            if json {
                try Output.jsonLine(report)
                return
            }
            let source = report.source == "beatnet" ? "beatnet" : "constant grid (consensus tempo, onset phase)"
            print("\(file): \(report.beats.count) beats, " + String(format: "%.2f BPM", report.bpm) + ", \(source)")
            let downbeats = Set(report.downbeats)
            print(lines: report.beats.map { String(format: "%.3f", $0) + (downbeats.contains($0) ? " downbeat" : "") })
            if let click { print("click track written to \(click)") }
        }

        /// beatnet's beats, or the constant grid.
        private func locate(in decoded: DecodedAudio) throws -> Report {
            let registry = BuiltinDetectors.registry
            let rate = Double(decoded.sampleRate)
            if !grid {
                let beatnet = try registry.make("beatnet")
                let output = beatnet.analyze(decoded.samples, sampleRate: rate)
                if let bpm = output.bpm, let beats = output.beats, !beats.times.isEmpty {
                    return Report(file: file, source: "beatnet", bpm: bpm, beats: beats.times, downbeats: beats.downbeats ?? [])
                }
            }
            let analyzer = SongAnalyzer(detectors: try registry.defaultNames.map { try registry.make($0) })
            let output = analyzer.analyze(samples: decoded.samples, sampleRate: rate)
            guard let bpm = Consensus.of(output.analyses, advisory: analyzer.advisory).bpm else {
                throw CommandFailure("\(file): no tempo, so no beats")
            }
            guard let fitted = output.beatGrid else {
                throw CommandFailure("\(file): no clear beat at the consensus tempo " + String(format: "%.2f BPM", bpm))
            }
            let beats = fitted.beats(until: Double(decoded.samples.count) / rate)
            return Report(file: file, source: "constant-grid", bpm: fitted.bpm, beats: beats, downbeats: [])
        }
    }
}
