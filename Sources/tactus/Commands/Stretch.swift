import ArgumentParser
import Foundation
import TactusAudio
import TactusClient
import TactusModel
import TactusProtocol
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

                The output is written beside its path and put in place once complete: an existing \
                file is refused unless --force (a symbolic link there is then replaced, never \
                followed), and the song itself never.

                With --server, the song is rendered by that server from its library (its `stretch` \
                and `render` requests): SONG is a file whose content the library holds, a song id \
                (or a prefix of 8 hex digits or more), or a path or file name the library stores; the song's tempo is the library's consensus \
                (--from-bpm and --engine do not apply), and the WAV file is downloaded into --output. \
                With --json, the render's status is printed (SPEC.md, section 3.7).

                Examples:
                  tactus stretch song.mp3 --bpm 170 -o song-170.wav
                  tactus stretch song.flac --bpm 165 --from-bpm 84 --max-stretch 4 -o out.wav --json
                  tactus stretch 3f9a3f9a --bpm 170 -o song-170.wav --server tcp://10.0.0.2:5555
                """)

        @Argument(help: ArgumentHelp("The song (any format tactus analyze reads).", valueName: "song"))
        var song: String

        @Option(help: ArgumentHelp("The tempo to render at.", valueName: "bpm"))
        var bpm: Double

        @Option(name: .shortAndLong, help: ArgumentHelp("The WAV file to write.", valueName: "file"))
        var output: String

        @Flag(help: "Replace the output file if it exists.")
        var force = false

        @Option(name: .customLong("from-bpm"), help: ArgumentHelp("The song's tempo, instead of analysing it.", valueName: "bpm"))
        var fromBPM: Double?

        @Option(name: .customLong("max-stretch"), help: ArgumentHelp("The largest change of tempo, in percent.", valueName: "pct"))
        var maxStretch = 8.0

        @Option(help: ArgumentHelp("Rubber Band's engine: faster (R2) or finer (R3, slower).", valueName: "engine"))
        var engine: TimeStretcher.Engine = .faster

        @Flag(help: "Print what was written as JSON.")
        var json = false

        @OptionGroup var connection: ServerOptions

        func validate() throws {
            guard (20...400).contains(bpm) else { throw ValidationError("--bpm must be in 20...400") }
            if let fromBPM, !(20...400).contains(fromBPM) { throw ValidationError("--from-bpm must be in 20...400") }
            guard maxStretch > 0, maxStretch <= 50 else { throw ValidationError("--max-stretch must be a percentage in (0, 50]") }
            if connection.server != nil, fromBPM != nil {
                throw ValidationError("--from-bpm does not apply with --server: the server takes the library's tempo")
            }
        }

        func run() throws {
            if connection.server != nil { return try runOnServer() }
            let result: SongStretch
            do throws(StretchError) {
                let file = try OutputFile(path: output, replacing: force, sparing: [song])
                result = try SongStretch.render(
                    song, targetBPM: bpm, output: file, sourceBPM: fromBPM, maxStretch: maxStretch / 100, engine: engine)
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

        /// The song rendered by the server and downloaded into --output.
        private func runOnServer() throws {
            let file = try OutputFile.checked(output, replacing: force, sparing: [song])
            let client = try connection.client()
            let name = try SongLookup.songName(song, on: client)
            let rendered: (status: RenderStatus, wav: [UInt8])
            do throws(ClientError) {
                rendered = try client.renderedSong(StretchRequest(song: name, bpm: bpm, maxStretchPct: maxStretch))
            } catch {
                throw CommandFailure("\(song): \(error.description)")
            }
            try file.save(rendered.wav)
            let status = rendered.status
            if json {
                try Output.jsonLine(status)
            } else {
                // A song's render has all of these.
                let factor = status.factor ?? 1
                let octave = factor == 1 ? "" : " (× \(factor))"
                print("Wrote \(output): song \(status.song?.short ?? "") at " + String(format: "%.2f BPM", status.sourceBPM ?? 0)
                    + octave + String(format: " played as %.2f BPM (tempo × %.4f), %.1f s, rendered by %@ in %.2f s",
                        status.targetBPM ?? 0, status.tempoRatio ?? 0, status.durationS ?? 0, client.server, status.renderS ?? 0))
            }
        }
    }
}
