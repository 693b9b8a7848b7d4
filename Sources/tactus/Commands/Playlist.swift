import ArgumentParser
import TactusModel
import TactusProtocol
import TactusStore

extension Tactus {
    /// `tactus playlist`: songs to run to at a cadence.
    struct Playlist: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "playlist",
            abstract: "Build a playlist for a running cadence (steps per minute).",
            discussion: """
                Picks songs whose tempo, or half or double it, lies within the tolerance of the \
                cadence, closest first, never the same song twice. --profile follows cadences over \
                time, for example 10m@150,5m@170,10m@160: each segment starts when the profile \
                says, within about half a song (a song is taken when it ends by its segment's end, \
                then the one whose end lands nearest it). When a segment's fitting songs run out, \
                it is filled from the songs nearest its cadence beyond the tolerance (--strict: \
                left short instead). After the songs, a table of the segments: when each starts \
                (and when the profile starts it), how much music it got, and how far its songs are \
                from its cadence.

                With --json: one line per song, its match with position, start_s, cadence, off_pct \
                (how far it is from the cadence, in percent) and fits (within the tolerance); the \
                warnings on standard error name the short segments and those filled beyond the \
                tolerance (the server's playlist reply also carries each segment's figures).

                --m3u8 FILE also writes the playlist for a player (see tactus query --help), songs \
                found at their stored paths or, with --music, by file name and content.

                With --db, reads the library file; otherwise asks the server (--server), which \
                answers the same way. --render renders the playlist locally from the files under \
                --music, or, without --music, on the server (2 s crossfades on beats) and downloads it.

                Examples:
                  tactus playlist --profile 10m@150,5m@170,10m@160 --m3u8 run.m3u8 --db lib.sqlite
                  tactus playlist --cadence 172 --minutes 45 --tolerance 3 --json
                """)

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var playlistFile: M3U8Options

        @Option(help: ArgumentHelp("Steps per minute.", valueName: "spm"))
        var cadence: Double?

        @Option(help: ArgumentHelp("How far a song's tempo may be from the cadence, in percent.", valueName: "pct"))
        var tolerance = 4.0

        @Option(help: "Length of the playlist, in minutes (with --cadence).")
        var minutes = 30.0

        @Option(help: ArgumentHelp("Cadences over time, as DURATION@SPM,... (for example 10m@150,5m@170).", valueName: "spec"))
        var profile: String?

        @Option(help: "Use this detector's tempo instead of the consensus.")
        var detector: String?

        @Flag(help: "Only songs within the tolerance: a segment whose songs run out stays short.")
        var strict = false

        @OptionGroup var following: CadenceFollowOptions

        func validate() throws {
            if [cadence != nil, profile != nil, following.cadenceFrom != nil].filter({ $0 }).count != 1 {
                throw ValidationError("give one of --cadence, --profile and --follow (--cadence-from)")
            }
            if !(tolerance > 0 && tolerance < 50) { throw ValidationError("--tolerance must be a percentage in (0, 50)") }
            if !(minutes > 0) { throw ValidationError("--minutes must be > 0") }
            if following.music != nil && following.render == nil && playlistFile.m3u8 == nil {
                throw ValidationError("--music goes with --render or --m3u8")
            }
            if following.render != nil && following.music == nil {
                if source.library.path != nil {
                    throw ValidationError("--render and --music go together with --db (without --db, the server renders)")
                }
                if following.crossfade != 2 || following.crossfadeByTime {
                    throw ValidationError("the server crossfades 2 s on beats: --crossfade and --crossfade-by-time need --music")
                }
            }
        }

        func run() throws {
            let request = try query()
            let playlist = try LibrarySource(source, mode: .readOnly).playlist(request)
            for fill in playlist.fills where fill.isShort {
                Output.warn(
                    "only \(Output.clock(fill.filledS)) of music for the \(Output.clock(fill.segment.durationS)) "
                        + "at \(Output.bpm(fill.segment.cadence)) steps per minute")
            }
            for fill in playlist.fills where fill.beyondToleranceS > 0 {
                Output.warn(
                    "\(Output.clock(fill.beyondToleranceS)) of the \(Output.clock(fill.segment.durationS)) at "
                        + "\(Output.bpm(fill.segment.cadence)) steps per minute are songs beyond the tolerance (up to "
                        + String(format: "%.1f %%", fill.maxOffPct ?? 0) + " off): not enough songs within it")
            }
            let export = PlaylistExport(options: playlistFile, music: following.music)
            if output.json {
                for entry in playlist.entries { try Output.jsonLine(PlaylistLine(entry)) }
                try export.writeIfAsked(playlist.entries.map(\.match), json: true)
                try renderIfAsked(playlist, request: request)
                return
            }
            Output.table(
                ["#", "START", "SPM", "BPM", "FACTOR", "OFF", "LENGTH", "TITLE", "ARTIST", "FILE"],
                playlist.entries.map { entry in
                    [
                        "\(entry.position)", Output.clock(entry.startS), Output.bpm(entry.cadence), Output.bpm(entry.match.bpm),
                        Output.factor(entry.match.factor), String(format: "%+.1f %%", entry.offPct) + (entry.fits ? "" : " !"),
                        Output.clock(entry.match.durationS), entry.match.title ?? "", entry.match.artist ?? "", entry.match.file,
                    ]
                })
            let total = playlist.entries.reduce(0) { $0 + $1.match.durationS }
            print("\(playlist.entries.count) songs, \(Output.clock(total))")
            print()
            Output.table(
                ["SEGMENT", "SPM", "PLANNED", "STARTS", "LENGTH", "MUSIC", "MEAN OFF", "MAX OFF", "BEYOND TOLERANCE"],
                playlist.fills.enumerated().map { index, fill in
                    [
                        "\(index + 1)", Output.bpm(fill.segment.cadence), Output.clock(fill.plannedStartS), Output.clock(fill.startS),
                        Output.clock(fill.segment.durationS), Output.clock(fill.filledS) + (fill.isShort ? " (short)" : ""),
                        fill.meanOffPct.map { String(format: "%.1f %%", $0) } ?? "-",
                        fill.maxOffPct.map { String(format: "%.1f %%", $0) } ?? "-", Output.clock(fill.beyondToleranceS),
                    ]
                })
            try export.writeIfAsked(playlist.entries.map(\.match), json: false)
            try renderIfAsked(playlist, request: request)
        }

        /// One song of the playlist as a JSON line: the query fields plus its place in the run.
        struct PlaylistLine: Encodable {
            var entry: TactusModel.Playlist.Entry

            init(_ entry: TactusModel.Playlist.Entry) { self.entry = entry }

            enum CodingKeys: String, CodingKey {
                case position, startS = "start_s", cadence, offPct = "off_pct", fits
            }

            func encode(to encoder: any Encoder) throws {
                try entry.match.encode(to: encoder)
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(entry.position, forKey: .position)
                try container.encode(entry.startS, forKey: .startS)
                try container.encode(entry.cadence, forKey: .cadence)
                try container.encode(entry.offPct, forKey: .offPct)
                try container.encode(entry.fits, forKey: .fits)
            }
        }
    }
}
