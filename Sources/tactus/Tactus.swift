import ArgumentParser
import TactusModel

/// The `tactus` command: tempo analysis of music files, offline or through a server. Its
/// subcommands are nested in it (`Tactus.Analyze`, `Tactus.Result`...), one file each in `Commands/`.
@main
struct Tactus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tactus",
        abstract: "Tempo analysis for music libraries.",
        discussion: """
            Tactus finds the tempo (BPM) of songs with several detectors, stores the results \
            with their per-window energies and tempi, and answers BPM-range queries.
            """,
        version: TactusVersion.current,
        subcommands: [
            Probe.self, Analyze.self, Beats.self, Detectors.self, Serve.self, Worker.self, Submit.self, Status.self,
            Result.self, Cancel.self, Query.self, Compare.self, Truth.self,
            Playlist.self, Export.self, Plot.self, Keys.self, Health.self, Cadence.self, Stretch.self, Tags.self, Scan.self, Prune.self, Web.self,
            ServiceHost.self,
        ]
    )
}
