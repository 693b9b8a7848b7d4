import ArgumentParser
import Foundation
import TactusModel
import TactusStretch

extension Tactus {
    /// `tactus export --rekordbox FILE`: the library as DJ software's collection.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the library's songs as a rekordbox XML collection, with their tempo and beat grid.",
            discussion: """
                Writes a rekordbox XML collection (File > Import > Collection in rekordbox; Mixxx, \
                Serato, Engine DJ and VirtualDJ import it too, or read it through their own \
                converters): each song as a TRACK with its Location (a file:// URL of the path the \
                library stores), Name, Artist, Kind, TotalTime, AverageBpm and, when the song has \
                one, a TEMPO beat grid: Inizio (the first beat, in seconds), Bpm (the grid's tempo: the \
                consensus refined to the song's onsets, which AverageBpm then gives too), Metro 4/4 \
                and Battito 1. The grid is the constant grid every \
                analysis fits at the consensus tempo; a song without one (no clear beat, or analysed \
                before grids existed: analyse it again) gets no TEMPO, and rekordbox analyses it \
                itself. Playlists: every song (in tempo order) and a folder "Tactus by tempo" of \
                playlists by ten-BPM band.

                Songs without a stored path (uploaded ones) cannot be located by a DJ program: \
                they are left out, each named in a warning. The file is written through a \
                temporary file in its folder and put in place whole. An existing FILE is replaced \
                only with --force, and never when it is a SQLite database (a Tactus library, for \
                one) or the library --db reads.

                With --db, reads the library file; otherwise asks the server (--server). With \
                --json, prints {file, tracks, with_grid, omitted: [{song, file, reason}]}.

                Examples:
                  tactus export --rekordbox ~/Music/tactus.xml --db lib.sqlite
                  tactus export --rekordbox 128.xml --bpm 124..132 --stable
                """)

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions

        @Option(help: ArgumentHelp("Write the rekordbox XML collection to this file.", valueName: "file"))
        var rekordbox: String

        @Option(help: ArgumentHelp("Only songs whose consensus tempo lies in this range (default: every song).", valueName: "lo..hi"))
        var bpm: BPMRange?

        @Flag(help: "Only songs whose tempo holds throughout (their tempo map is one steady segment).")
        var stable = false

        @Flag(help: "Only songs whose tempo changes (steps or ramps in their tempo map).")
        var changing = false

        @Flag(help: "Replace the file given to --rekordbox if it exists (never a SQLite database).")
        var force = false

        func validate() throws {
            if stable && changing { throw ValidationError("--stable and --changing are alternatives; give one") }
            if rekordbox.isEmpty { throw ValidationError("--rekordbox needs a file name") }
        }

        /// What `export --json` prints.
        struct Report: Encodable {
            struct Omitted: Encodable {
                var song: String
                var file: String
                var reason: String
            }
            var file: String
            var tracks: Int
            var withGrid: Int
            var omitted: [Omitted]

            enum CodingKeys: String, CodingKey {
                case file, tracks, withGrid = "with_grid", omitted
            }
        }

        /// Songs asked of the server at a time (``TempoOrderPaging``: a scan may add songs meanwhile).
        static let pageSize = 2_000

        func run() throws {
            // Checked before the library is read: a refused path costs no query.
            let file = try OutputFile.checked(rekordbox, replacing: force, sparing: [source.library.path].compactMap { $0 })
            let library = try LibrarySource(source, mode: .readOnly)
            let range = bpm?.range ?? TempoQuery.acceptedBPM
            var paging = TempoOrderPaging(from: range.lowerBound, pageSize: Self.pageSize)
            while !paging.isComplete {
                paging.take(
                    try library.query(
                        TempoQuery(
                            range: paging.lower...range.upperBound, source: .consensus, order: .bpm, limit: Self.pageSize,
                            offset: paging.skip, stable: stable ? true : changing ? false : nil)))
            }
            let songs = paging.songs
            let name = bpm.map { String(format: "Tactus %g-%g BPM", $0.range.lowerBound, $0.range.upperBound) } ?? "Tactus"
            let (text, written) = RekordboxCollection(songs, playlistName: name, productVersion: TactusVersion.current).contents()
            try file.save(Array(text.utf8))
            let path = URL(fileURLWithPath: rekordbox).standardizedFileURL.path
            for omission in written.omitted {
                Output.warn("song \(omission.song.song.short) (\(omission.song.file)) is not in \(rekordbox): \(omission.reason)")
            }
            if output.json {
                try Output.jsonLine(
                    Report(
                        file: path, tracks: written.tracks, withGrid: written.withGrid,
                        omitted: written.omitted.map { .init(song: $0.song.song.hex, file: $0.song.file, reason: $0.reason) }))
                return
            }
            print(
                "wrote \(path): \(written.tracks) of \(songs.count) songs, \(written.withGrid) with a beat grid"
                    + (written.omitted.isEmpty ? "" : ", \(written.omitted.count) without a known path"))
        }
    }
}
