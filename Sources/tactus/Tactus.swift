import ArgumentParser

/// The `tactus` command: tempo analysis of music files, offline or through a server.
@main
struct Tactus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tactus",
        abstract: "Tempo analysis for music libraries.",
        discussion: """
            Tactus finds the tempo (BPM) of songs with several detectors, stores the results \
            with their per-window energies and tempi, and answers BPM-range queries.
            """,
        version: "0.1.0",
        subcommands: [
            Probe.self, Analyze.self, Detectors.self, Serve.self, WorkerCommand.self, Submit.self, Status.self,
            ResultCommand.self, Cancel.self, QueryCommand.self, CompareCommand.self, TruthCommand.self,
            PlaylistCommand.self, PlotCommand.self, KeysCommand.self, HealthCommand.self, Cadence.self, Stretch.self,
        ]
    )
}
