import ArgumentParser
import TactusModel
import TactusStore

extension Tactus {
    /// `tactus query`: songs in a BPM range.
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "query",
            abstract: "List the songs whose tempo lies in a BPM range.",
            discussion: """
                By default a song's tempo is the consensus of its detectors; --detector uses one \
                detector's tempo, --agree N needs N detectors whose tempi fall in the range. With \
                --octave, songs at half or double a tempo of the range match too, with factor 1/2 \
                or 2 (the song's tempo divided by the tempo of the range it matches). --stable keeps \
                the songs whose tempo holds throughout, --changing those whose tempo changes (by \
                their tempo map, shown by `tactus result`).

                With --db, reads the library file; otherwise asks the server (--server), which \
                answers the same way.

                --m3u8 FILE also writes the songs as a playlist a player opens: #EXTM3U, then \
                for each song #EXTINF with its duration and "artist - title" (or its file name) \
                and its path, absolute or, with --relative, relative to the playlist's folder. A \
                song's path is the one the library stores, else the file of its name under \
                --music whose content is the song; songs without one are left out, each named in \
                a warning.

                Examples:
                  tactus query --bpm 165..175 --octave --db lib.sqlite
                  tactus query --bpm 120..130 --m3u8 ~/Music/lists/128.m3u8 --relative --music ~/Music --db lib.sqlite
                """)

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var playlistFile: M3U8Options

        @Option(help: ArgumentHelp(
            "With --m3u8: find songs without a stored path here (by file name, checked by content).", valueName: "directory"))
        var music: String?

        @Option(help: ArgumentHelp("The tempo range, inclusive (for example 120..130).", valueName: "lo..hi"))
        var bpm: BPMRange

        @Option(help: "Use this detector's tempo.")
        var detector: String?

        @Flag(help: "Use the consensus tempo (the default).")
        var consensus = false

        @Option(help: ArgumentHelp("Songs where at least N detectors agree on a tempo in the range.", valueName: "n"))
        var agree: Int?

        @Flag(help: "Also match half and double tempi.")
        var octave = false

        @Option(
            help: """
                closeness (to the centre of the range), bpm (slowest first), newest (last added first), \
                title, artist, duration (shortest first), confidence (least sure first) or agreement (fewest detectors first).
                """)
        var order: TempoOrder = .closeness

        @Flag(help: "Reverse the order.")
        var descending = false

        @Option(help: "At most this many songs.")
        var limit: Int?

        @Option(help: "Skip this many songs first.")
        var offset = 0

        @Flag(help: "Only songs whose tempo holds throughout (their tempo map is one steady segment).")
        var stable = false

        @Flag(help: "Only songs whose tempo changes (steps or ramps in their tempo map).")
        var changing = false

        func validate() throws {
            if [detector != nil, consensus, agree != nil].filter({ $0 }).count > 1 {
                throw ValidationError("--detector, --consensus and --agree are alternatives; give one")
            }
            if let agree, agree < 1 { throw ValidationError("--agree needs a number of detectors >= 1") }
            if let limit, limit < 0 { throw ValidationError("--limit must be >= 0") }
            if music != nil && playlistFile.m3u8 == nil { throw ValidationError("--music goes with --m3u8") }
            if offset < 0 { throw ValidationError("--offset must be >= 0") }
            if stable && changing { throw ValidationError("--stable and --changing are alternatives; give one") }
        }

        func run() throws {
            let tempo: TempoSource =
                if let detector { .detector(detector) } else if let agree { .agreement(minimum: agree) } else { .consensus }
            let query = TempoQuery(
                range: bpm.range, source: tempo, octave: octave, order: order, descending: descending, limit: limit, offset: offset,
                stable: stable ? true : changing ? false : nil)
            let matches = try LibrarySource(source, mode: .readOnly).query(query)
            let export = PlaylistExport(options: playlistFile, music: music)
            if output.json {
                for match in matches { try Output.jsonLine(match) }
                try export.writeIfAsked(matches, json: true)
                return
            }
            Output.table(
                ["SONG", "BPM", "FACTOR", "DETECTOR", "TITLE", "ARTIST", "FILE"],
                matches.map { match in
                    [
                        match.song.short, Output.bpm(match.bpm), Output.factor(match.factor),
                        match.detector == "agree" ? match.detectors.joined(separator: "+") : match.detector,
                        match.title ?? "", match.artist ?? "", match.file,
                    ]
                })
            print("\(matches.count) song\(matches.count == 1 ? "" : "s")")
            try export.writeIfAsked(matches, json: false)
        }
    }
}

extension TempoOrder: ExpressibleByArgument {}
