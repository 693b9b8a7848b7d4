import ArgumentParser
import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusLibraryService
import TactusModel
import TactusPlot
import TactusProtocol
import TactusStore

extension Tactus {
    /// `tactus plot SONG-OR-FILE`: one figure of a song's envelope, per-window tempi and candidates.
    struct Plot: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plot",
            abstract: "Draw a song's energy envelope, per-window tempi and tempo candidates (SVG or PNG).",
            discussion: """
                One figure, three charts: the energy envelope in dB over time (10·log10 of the \
                mean square per 23.2 ms block: 0 dB is a full-scale square wave), each detector's \
                tempo per analysis window on the same time axis (dot size and opacity: the \
                window's strength), and each detector's tempo candidates as bars. One colour per \
                detector, named in the legend with its tempo and confidence.

                The song is a SHA-256, a prefix of at least 8 hex digits, a file (its bytes \
                are hashed), or a path or file name the library stores. With --db it is read from that library; a file the library does not \
                hold is analysed here, with every built-in detector. Otherwise it is asked of the \
                server (--server, else $TACTUS_SERVER, else tcp://127.0.0.1:5555).

                -o names the output: FILE.svg, or FILE.png (converted by rsvg-convert, from the \
                Debian package librsvg2-bin). The default is the song id's first 12 digits + .svg. \
                With --json: one object {song, output, format, width, height, source (library, \
                server or analysis), detectors}.
                """)

        @Argument(help: ArgumentHelp("The song: a SHA-256, a prefix of one (8+ hex digits), or a file.", valueName: "song-or-file"))
        var song: String

        @OptionGroup var source: LibrarySourceOptions

        @Option(name: .shortAndLong, help: ArgumentHelp("The image to write: FILE.svg or FILE.png.", valueName: "file"))
        var output: String?

        @Flag(help: "Print what was written as JSON.")
        var json = false

        func validate() throws {
            if let output {
                do throws(PlotError) { _ = try ImageFile(path: output) } catch { throw ValidationError(error.description) }
            }
        }

        func run() throws {
            let figure: (plot: SongPlot, song: SongID, source: PlotSource)
            if let database = source.library.path {
                figure = try PlotSource.fromLibrary(database, song: song)
            } else {
                figure = try PlotSource.fromServer(source.server, song: song)
            }
            let file: ImageFile
            do throws(PlotError) {
                file = try ImageFile(path: output ?? "\(figure.song.short).svg")
            } catch {
                throw CommandFailure(error.description)
            }
            let document = SongFigure(figure.plot).document()
            do throws(PlotError) {
                try file.write(document)
            } catch {
                throw CommandFailure(error.description)
            }
            let summary = PlotSummary(
                song: figure.song, output: file.path, format: file.format, width: document.width, height: document.height,
                source: figure.source, detectors: figure.plot.traces.map(\.label))
            if json {
                try Output.jsonLine(summary)
            } else {
                print("Wrote \(file.path) (\(file.format.rawValue.uppercased()), \(Int(document.width)) × \(Int(document.height)) px): "
                    + "\(figure.plot.title), \(summary.detectors.count) detector\(summary.detectors.count == 1 ? "" : "s") "
                    + "(\(summary.source.description)).")
            }
        }
    }
}

/// What `plot --json` prints.
struct PlotSummary: Encodable {
    var song: SongID
    var output: String
    var format: ImageFile.Format
    var width: Double
    var height: Double
    var source: PlotSource
    var detectors: [String]
}

/// Where the plotted results came from, and how each source is read.
enum PlotSource: String, Encodable, CustomStringConvertible {
    /// A library file (`--db`).
    case library
    /// A coordinator's `result` reply.
    case server
    /// The file analysed in this process, because the library does not hold it.
    case analysis

    var description: String {
        switch self {
        case .library: "from the library"
        case .server: "from the server"
        case .analysis: "analysed here: not in the library"
        }
    }

    /// The song named `name` in the library at `path`; a file the library does not hold is
    /// analysed in process instead. The song's analyses, envelope and reference come from the
    /// ``LibraryService`` the server answers with; its tags from its record.
    static func fromLibrary(_ path: String, song name: String) throws -> (plot: SongPlot, song: SongID, source: PlotSource) {
        let service = LibraryService(library: try LibraryOptions.open(path, .readOnly))
        let resolution = try SongLookup.resolve([name], in: service)[0]
        if let file = existingFile(name), resolution.problem?.code == .notFound {
            return (try analyse(file), try hash(file), .analysis)
        }
        let id = try SongLookup.song(resolution)
        return try reportingFailures {
            guard let record = try service.library.song(id) else { throw StoreError.unknownSong(name) }
            let (result, values) = try service.result(ResultRequest(song: id, windows: true, envelope: true))
            let envelope = result.envelopeHopS.flatMap { hop in values.map { EnergyEnvelope(hopS: hop, values: $0) } }
            let plot = SongPlot(
                title: SongPlot.title(title: record.tags.title, artist: record.tags.artist, file: record.fileName),
                subtitle: subtitle(file: record.fileName, durationS: record.durationS, song: id,
                                   from: "library \(URL(fileURLWithPath: path).lastPathComponent)"),
                durationS: record.durationS, envelope: envelope, analyses: result.analyses,
                consensusBPM: result.consensus.bpm, referenceBPM: try service.truth(TruthRequest(song: id)).reference?.bpm,
                tempoMap: result.consensus.tempoMap, beatGrid: result.beatGrid)
            return (plot, id, .library)
        }
    }

    /// The song named `name` (a file is hashed here) as the server's `result` reply has it.
    static func fromServer(_ server: ServerOptions, song name: String) throws -> (plot: SongPlot, song: SongID, source: PlotSource) {
        let client = try reportingFailures { try server.client() }
        let song = try SongLookup.songName(name, on: client)
        let (response, values) = try reportingFailures {
            try client.result(ResultRequest(song: song, windows: true, envelope: true))
        }
        let envelope = response.envelopeHopS.flatMap { hop in values.map { EnergyEnvelope(hopS: hop, values: $0) } }
        let file = response.name ?? response.song.hex
        let plot = SongPlot(
            title: file,
            subtitle: subtitle(file: file, durationS: response.durationS, song: response.song, from: "server \(server.endpoint)"),
            durationS: response.durationS, envelope: envelope, analyses: response.analyses,
            consensusBPM: response.consensus.bpm, tempoMap: response.consensus.tempoMap, beatGrid: response.beatGrid)
        return (plot, response.song, .server)
    }

    /// Every built-in detector's analysis of `file`, run in this process.
    static func analyse(_ file: String) throws -> SongPlot {
        let result = SongAnalyzer.builtin().analyze(.file(file))
        if let error = result.error { throw CommandFailure("cannot analyse \(file): \(error.message)") }
        let name = URL(fileURLWithPath: file).lastPathComponent
        let tags = result.metadata?.tags
        return SongPlot(
            title: SongPlot.title(title: tags?.title, artist: tags?.artist, file: name),
            subtitle: subtitle(file: name, durationS: result.durationSeconds, song: result.song, from: "analysed in process"),
            durationS: result.durationSeconds, envelope: result.envelope, analyses: result.analyses,
            consensusBPM: result.consensus.bpm, tempoMap: result.consensus.tempoMap, beatGrid: result.beatGrid)
    }

    /// `song.flac · 3:25 · song 1a2b3c4d5e6f · library x.sqlite`.
    private static func subtitle(file: String, durationS: Double?, song: SongID?, from source: String) -> String {
        ([file] + [durationS.map { Output.clock($0) }, song.map { "song \($0.short)" }, source].compactMap { $0 })
            .joined(separator: " · ")
    }

    private static func existingFile(_ name: String) -> String? {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory) && !isDirectory.boolValue ? name : nil
    }

    private static func hash(_ file: String) throws -> SongID {
        do throws(AudioError) {
            return try SongID(of: .file(file))
        } catch {
            throw CommandFailure("cannot read \(file): \(error.description)")
        }
    }
}
