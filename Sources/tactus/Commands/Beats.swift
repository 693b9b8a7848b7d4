import ArgumentParser
import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStretch

extension Tactus {
    /// `tactus beats FILE`: where the beats of a song fall.
    struct Beats: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "beats",
            abstract: "Print the beat times (and downbeats) of an audio file; optionally write a click track over it.",
            discussion: """
                A file is analysed here by every built-in detector. A song of steady tempo (its \
                tempo map one steady segment) gets the constant grid every analysis fits: the \
                consensus tempo refined to the song's onsets, from the beat the music starts on, \
                marked "constant grid" (`analyze` prints it as "beat grid"); on steady songs it \
                is the more exact of the two (tactus-bench beats). A song whose tempo changes gets \
                beatnet's beats, from its tempo-and-position model on the learned beat \
                activation, which follow the changes. --grid and --tracked choose one of the two \
                for every song; with no tracked beats, the grid is given.

                With --db or --server, SONG is a song of that library (a SHA-256, a prefix of 8+ \
                hex digits, a file or a name the library stores) and its stored beats are chosen \
                the same way: the stored grid, or a beat-tracking detector's (beatnet, when it \
                was asked for). Nothing is analysed.

                Prints the source and tempo, then one beat time in seconds a line, downbeats \
                followed by " downbeat". With --json, one object: {file, source ("beatnet" or \
                "constant-grid"), bpm, beats [seconds], downbeats [seconds]}, or on failure \
                {file, error: {code, message}} (as `cadence --json`). With --click OUT.wav, \
                also writes the song (mono) with a click on each beat (higher on downbeats); a \
                stored song is read from its file below the library roots.

                Exit status: 0 when beats were found, 1 when the song could not be read or has \
                no beat, 2 on usage errors.
                """
        )

        @Argument(help: ArgumentHelp("The audio file, or with --db or --server a song of the library.", valueName: "song-or-file"))
        var file: String

        @OptionGroup var source: LibrarySourceOptions

        @Flag(help: "Give the constant grid of the consensus tempo even where the tempo changes.")
        var grid = false

        @Flag(help: "Give beatnet's tracked beats even for a song of steady tempo.")
        var tracked = false

        @Flag(help: "Print one JSON object.")
        var json = false

        @Option(help: ArgumentHelp("Also write the song with a click on each beat to this WAV file.", valueName: "path"))
        var click: String?

        /// `--force` as for `stretch` (what the refusal of an existing file says to give);
        /// `--replace`, its first name, still works.
        @Flag(name: [.customLong("force"), .customLong("replace")], help: "With --click: replace the WAV file if it exists.")
        var replace = false

        /// What `beats` prints with --json.
        struct Report: Encodable {
            var file: String
            var source: String
            var bpm: Double
            var beats: [Double]
            var downbeats: [Double]
            /// Where the song's audio is, for --click (not printed).
            var path: String?

            enum CodingKeys: String, CodingKey {
                case file, source, bpm, beats, downbeats
            }
        }

        func validate() throws {
            if grid && tracked { throw ValidationError("--grid and --tracked ask for different beats: give one of them") }
        }

        func run() throws {
            guard json else { return try report() }
            do {
                try report()
            } catch let exit as ExitCode {
                throw exit
            } catch {
                // With --json a failure is JSON too, on standard output, as `cadence --json` prints it.
                try Output.jsonLine(FileFailure(file: file, error))
                throw ExitCode.failure
            }
        }

        /// Finds the beats, writes the click track if asked, and prints them.
        private func report() throws {
            let report: Report
            var audio: DecodedAudio?
            if source.library.path != nil || source.server.server != nil {
                report = try stored()
                if click != nil {
                    guard let path = report.path else {
                        throw CommandFailure(
                            "\(file): no file of this song is known below the library roots (it was uploaded): --click needs it",
                            code: .notFound)
                    }
                    audio = try decode(path)
                }
            } else {
                let decoded = try decode(file)
                report = try locate(in: decoded)
                audio = decoded
            }
            if let click, let audio {
                do throws(StretchError) {
                    try ClickTrack.write(
                        audio.samples, sampleRate: audio.sampleRate, beats: report.beats, downbeats: report.downbeats,
                        to: click, replacing: replace, sparing: [file] + [report.path].compactMap { $0 })
                } catch {
                    // The error names the path already.
                    throw CommandFailure(error.description)
                }
            }
            if json {
                try Output.jsonLine(report)
                return
            }
            let source = report.source == "constant-grid" ? "constant grid (consensus tempo, onset phase)" : report.source
            print("\(ShownText.escaped(report.file)): \(report.beats.count) beats, " + String(format: "%.2f BPM", report.bpm) + ", \(source)")
            let downbeats = Set(report.downbeats)
            print(lines: report.beats.map { String(format: "%.3f", $0) + (downbeats.contains($0) ? " downbeat" : "") })
            if let click { print("click track written to \(click)") }
        }

        private func decode(_ path: String) throws -> DecodedAudio {
            do throws(AudioError) {
                return try DecodedAudio(decoding: .file(path))
            } catch {
                // Every AudioError names the file already.
                throw CommandFailure(error.description, code: error.code)
            }
        }

        /// The stored beats of the library's song `file`: its grid or a beat-tracking detector's.
        private func stored() throws -> Report {
            let library = try LibrarySource(source, mode: .readOnly)
            let song = try library.songName(file)
            let (response, _) = try library.result(ResultRequest(song: song, windows: true))
            let name = response.name ?? song
            let path = response.paths.first
            if let chosen = trackedBeats(response.analyses, grid: response.beatGrid, consensus: response.consensus) {
                return Report(
                    file: name, source: chosen.detector, bpm: chosen.bpm, beats: chosen.beats.times,
                    downbeats: chosen.beats.downbeats ?? [], path: path)
            }
            guard let fitted = response.beatGrid, let duration = response.durationS else {
                throw CommandFailure(
                    "\(file): no beats are stored for song \(song.prefix(12)) (no clear beat, or analysed before grids were stored: analyse it again)",
                    code: .noTempo)
            }
            return Report(
                file: name, source: "constant-grid", bpm: fitted.bpm, beats: fitted.beats(until: duration), downbeats: [], path: path)
        }

        /// Whether tracked beats are wanted rather than the grid: never with --grid; with
        /// --tracked, or where the song has no grid or its tempo changes (on a steady song the
        /// grid is the more exact).
        private func wantsTracked(grid fitted: BeatGrid?, consensus: ConsensusTempo) -> Bool {
            !grid && (tracked || fitted == nil || consensus.tempoMap?.stable == false)
        }

        /// The tracked beats to give rather than the grid, if wanted (``wantsTracked(grid:consensus:)``)
        /// and any: those of the first analysis that tracks beats.
        private func trackedBeats(
            _ analyses: [TempoAnalysis], grid fitted: BeatGrid?, consensus: ConsensusTempo
        ) -> (detector: String, bpm: Double, beats: BeatPositions)? {
            guard wantsTracked(grid: fitted, consensus: consensus) else { return nil }
            for analysis in analyses {
                if let beats = analysis.beats, !beats.times.isEmpty, let bpm = analysis.bpm { return (analysis.detector, bpm, beats) }
            }
            return nil
        }

        /// The file analysed by the voting detectors, and by every built-in one (beatnet too)
        /// only when tracked beats are wanted: the grid, or beatnet's beats where the tempo
        /// changes. (beatnet does not vote, so the consensus, its tempo map and the grid are
        /// the same either way; a steady song is spared its half second.) With --tracked every
        /// detector runs at once; otherwise a song found to need tracked beats is analysed again.
        private func locate(in decoded: DecodedAudio) throws -> Report {
            let registry = BuiltinDetectors.registry
            let rate = Double(decoded.sampleRate)
            func analysed(_ names: [String]) throws -> SongAnalyzer.Output {
                try SongAnalyzer(detectors: names.map { try registry.make($0) }).analyze(samples: decoded.samples, sampleRate: rate)
            }
            let trackedAsked = tracked && !grid
            var output = try analysed(trackedAsked ? registry.names : registry.defaultNames)
            if !trackedAsked, wantsTracked(grid: output.beatGrid, consensus: output.consensus) { output = try analysed(registry.names) }
            if let chosen = trackedBeats(output.analyses, grid: output.beatGrid, consensus: output.consensus) {
                return Report(
                    file: file, source: chosen.detector, bpm: chosen.bpm, beats: chosen.beats.times,
                    downbeats: chosen.beats.downbeats ?? [], path: file)
            }
            guard let bpm = output.consensus.bpm else {
                throw CommandFailure("\(file): no tempo, so no beats", code: .noTempo)
            }
            guard let fitted = output.beatGrid else {
                throw CommandFailure("\(file): no clear beat at the consensus tempo " + String(format: "%.2f BPM", bpm), code: .noTempo)
            }
            let beats = fitted.beats(until: Double(decoded.samples.count) / rate)
            return Report(file: file, source: "constant-grid", bpm: fitted.bpm, beats: beats, downbeats: [], path: file)
        }
    }
}
