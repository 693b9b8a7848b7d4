import ArgumentParser
import Foundation
import TactusStretch

extension TimeStretcher.Engine: ExpressibleByArgument {}

extension Tactus {
    /// `tactus stretch SONG --bpm N -o FILE`: a song rendered at another tempo, pitch kept.
    struct Stretch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stretch",
            abstract: "Render a song at a target tempo, pitch kept (Rubber Band), as a WAV file.",
            discussion: """
                Finds the song's tempo with every built-in detector (or takes --from-bpm), picks the \
                octave that needs the least change (a song at 85 BPM serves 170), and stretches it \
                with the Rubber Band Library (offline) into a mono 16-bit WAV file at the \
                song's sample rate. A song further than --max-stretch from the target, even at half \
                or double its tempo, is refused.

                Examples:
                  tactus stretch song.mp3 --bpm 170 -o song-170.wav
                  tactus stretch song.flac --bpm 165 --from-bpm 84 --max-stretch 4 -o out.wav --json
                """)

        @Argument(help: ArgumentHelp("The song (any format tactus analyze reads).", valueName: "song"))
        var song: String

        @Option(help: ArgumentHelp("The tempo to render at.", valueName: "bpm"))
        var bpm: Double

        @Option(name: .shortAndLong, help: ArgumentHelp("The WAV file to write.", valueName: "file"))
        var output: String

        @Option(name: .customLong("from-bpm"), help: ArgumentHelp("The song's tempo, instead of analysing it.", valueName: "bpm"))
        var fromBPM: Double?

        @Option(name: .customLong("max-stretch"), help: ArgumentHelp("The largest change of tempo, in percent.", valueName: "pct"))
        var maxStretch = 8.0

        @Option(help: ArgumentHelp("Rubber Band's engine: faster (R2) or finer (R3, slower).", valueName: "engine"))
        var engine: TimeStretcher.Engine = .faster

        @Flag(help: "Print what was written as JSON.")
        var json = false

        func validate() throws {
            guard (20...400).contains(bpm) else { throw ValidationError("--bpm must be in 20...400") }
            if let fromBPM, !(20...400).contains(fromBPM) { throw ValidationError("--from-bpm must be in 20...400") }
            guard maxStretch > 0, maxStretch <= 50 else { throw ValidationError("--max-stretch must be a percentage in (0, 50]") }
        }

        func run() throws {
            let result: SongStretch
            do throws(StretchError) {
                result = try SongStretch.render(
                    song, targetBPM: bpm, output: output, sourceBPM: fromBPM, maxStretch: maxStretch / 100, engine: engine)
            } catch {
                throw CommandFailure(error.description)
            }
            if json {
                try Output.jsonLine(result)
            } else {
                let octave = result.factor == 1 ? "" : " (× \(result.factor))"
                let change = String(format: "%.2f %% ", abs(result.tempoRatio - 1) * 100) + (result.tempoRatio >= 1 ? "faster" : "slower")
                print("Wrote \(result.output): \(result.file) at " + String(format: "%.2f BPM", result.sourceBPM) + octave
                    + " played \(change) as " + String(format: "%.2f BPM, %.1f s (was %.1f s), stretched in %.2f s",
                        result.targetBPM, result.outputSeconds, result.inputSeconds, result.stretchSeconds))
            }
        }
    }
}
