import ArgumentParser

/// `make bench`: the benchmarks that check Tactus's speed, memory and accuracy targets.
/// Each benchmark is a subcommand in a file of its own; `all` runs every one.
@main
struct TactusBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tactus-bench",
        abstract: "Measure Tactus against its speed, memory and accuracy targets.",
        subcommands: [
            DecodeBench.self, StoreBench.self, AccuracyBench.self, ServerBench.self, LoadBench.self, MemoryBench.self, CadenceBench.self,
            StretchBench.self, InPlaceBench.self, WisdomCommand.self, BeatBench.self,
            StretchInvarianceBench.self, CompoundMetreBench.self,
        ]
    )
}
