import ArgumentParser
import TactusProtocol
import TactusStore

/// `tactus playlist`: songs to run to at a cadence.
struct PlaylistCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Build a playlist for a running cadence (steps per minute).",
        discussion: """
            Picks songs whose tempo, or half or double it, lies within the tolerance of the \
            cadence, closest first, never the same song twice, until the duration is filled. \
            --profile follows cadences over time, for example 10m@150,5m@170,10m@160. \
            --cadence-from follows the cadence of an accelerometer recording (any that `tactus \
            cadence` reads): each stretch of steady cadence becomes a segment of the profile. \
            --sprint PERCENT aims that much above the cadence (or every cadence of the profile).

            --render FILE.wav renders the playlist as one continuous file: each song stretched to \
            its segment's tempo with Rubber Band (pitch kept), songs joined by --crossfade seconds. \
            Songs are chosen within --max-stretch of the cadence (instead of --tolerance) and \
            found under --music (by file name, checked by content).

            Examples:
              tactus playlist --db lib.sqlite --cadence 170 --minutes 40
              tactus playlist --db lib.sqlite --cadence-from run.csv --sprint 5
              tactus playlist --db lib.sqlite --profile 10m@150,20m@170 --render run.wav --music ~/Music

            With --db, reads the library file; otherwise asks the server (--server), which \
            answers the same way.
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

    @Option(name: .customLong("cadence-from"), help: ArgumentHelp(
        "Follow the cadence of this accelerometer recording (CSV, as tactus cadence reads).", valueName: "file"))
    var cadenceFrom: String?

    @Option(help: ArgumentHelp("Aim this many percent above the cadence (0 to 50).", valueName: "pct"))
    var sprint: Double?

    @Option(help: ArgumentHelp("Render the playlist into this WAV file, each song at its segment's tempo.", valueName: "file"))
    var render: String?

    @Option(help: ArgumentHelp("Where the playlist's songs are (with --render).", valueName: "directory"))
    var music: String?

    @Option(name: .customLong("max-stretch"), help: ArgumentHelp(
        "With --render: the largest change of a song's tempo, in percent.", valueName: "pct"))
    var maxStretch = 8.0

    @Option(help: ArgumentHelp("With --render: seconds of crossfade between songs.", valueName: "seconds"))
    var crossfade = 2.0

    func validate() throws {
        if [cadence != nil, profile != nil, cadenceFrom != nil].filter({ $0 }).count != 1 {
            throw ValidationError("give one of --cadence, --profile and --cadence-from")
        }
        if let sprint, !(0...50).contains(sprint) { throw ValidationError("--sprint must be a percentage in 0...50") }
        if (render == nil) != (music == nil) { throw ValidationError("--render and --music go together") }
        if !(maxStretch > 0 && maxStretch < 50) { throw ValidationError("--max-stretch must be a percentage in (0, 50)") }
        if !(0...10).contains(crossfade) { throw ValidationError("--crossfade must be 0 to 10 seconds") }
        if !(tolerance > 0 && tolerance < 50) { throw ValidationError("--tolerance must be a percentage in (0, 50)") }
        if !(minutes > 0) { throw ValidationError("--minutes must be > 0") }
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
            if let render, let music { try renderWorkout(playlist, to: render, music: music) }
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
        if let render, let music { try renderWorkout(playlist, to: render, music: music) }
    }

    /// One song of the playlist as a JSON line: the query fields plus its place in the run.
    struct PlaylistLine: Encodable {
        var entry: Playlist.Entry

        init(_ entry: Playlist.Entry) { self.entry = entry }

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
