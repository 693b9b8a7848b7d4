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
                cadence, closest first, never the same song twice, until the duration is filled. \
                --profile follows cadences over time, for example 10m@150,5m@170,10m@160.

                With --db, reads the library file; otherwise asks the server (--server), which \
                answers the same way. --render renders the playlist locally from the files under \
                --music, or, without --music, on the server (2 s crossfades on beats) and downloads it.
                """)

        @OptionGroup var source: LibrarySourceOptions
        @OptionGroup var output: OutputOptions

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

        @OptionGroup var following: CadenceFollowOptions

        func validate() throws {
            if [cadence != nil, profile != nil, following.cadenceFrom != nil].filter({ $0 }).count != 1 {
                throw ValidationError("give one of --cadence, --profile and --cadence-from")
            }
            if !(tolerance > 0 && tolerance < 50) { throw ValidationError("--tolerance must be a percentage in (0, 50)") }
            if !(minutes > 0) { throw ValidationError("--minutes must be > 0") }
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
            if output.json {
                for entry in playlist.entries { try Output.jsonLine(PlaylistLine(entry)) }
                try renderIfAsked(playlist, request: request)
                return
            }
            Output.table(
                ["#", "START", "SPM", "BPM", "FACTOR", "LENGTH", "TITLE", "ARTIST", "FILE"],
                playlist.entries.map { entry in
                    [
                        "\(entry.position)", Output.clock(entry.startS), Output.bpm(entry.cadence), Output.bpm(entry.match.bpm),
                        Output.factor(entry.match.factor), Output.clock(entry.match.durationS), entry.match.title ?? "",
                        entry.match.artist ?? "", entry.match.file,
                    ]
                })
            let total = playlist.entries.reduce(0) { $0 + $1.match.durationS }
            print("\(playlist.entries.count) songs, \(Output.clock(total))")
            try renderIfAsked(playlist, request: request)
        }

        /// One song of the playlist as a JSON line: the query fields plus its place in the run.
        struct PlaylistLine: Encodable {
            var entry: TactusModel.Playlist.Entry

            init(_ entry: TactusModel.Playlist.Entry) { self.entry = entry }

            enum CodingKeys: String, CodingKey {
                case position, startS = "start_s", cadence
            }

            func encode(to encoder: any Encoder) throws {
                try entry.match.encode(to: encoder)
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(entry.position, forKey: .position)
                try container.encode(entry.startS, forKey: .startS)
                try container.encode(entry.cadence, forKey: .cadence)
            }
        }
    }
}
