import ArgumentParser
import TactusStore

/// `tactus truth`: the reference tempi detectors are measured against.
struct TruthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "truth",
        abstract: "Set or import reference tempi (the tempo a person asserts for a song).",
        subcommands: [Set.self, Import.self])

    @OptionGroup var library: LibraryOptions

    /// `tactus truth --db PATH set SONG BPM`
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the reference tempo of one song.")

        @OptionGroup var library: LibraryOptions
        @OptionGroup var output: OutputOptions

        @Argument(help: ArgumentHelp("A SHA-256, a prefix of at least 8 hex digits, or a file.", valueName: "song"))
        var song: String

        @Argument(help: "The tempo, in 1...1000 BPM.")
        var bpm: Double

        func run() throws {
            let store = try library.open(.existing)
            let reference = try reportingStoreErrors { () throws -> ReferenceTempo? in
                let id = try store.resolveSong(song)
                try store.setReference(bpm, for: id)
                return try store.reference(for: id)
            }
            guard let reference else { throw ExitCode.failure }
            if output.json {
                try Output.jsonLine(reference)
            } else {
                print("\(reference.song): reference tempo \(Output.bpm(reference.bpm)) BPM")
            }
        }
    }

    /// `tactus truth --db PATH import FILE.csv`
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import reference tempi from a CSV file, all or nothing.",
            discussion: """
                The header names a bpm column and either a song column (SHA-256 or a prefix of \
                at least 8 hex digits) or a file column (a path relative to the CSV, hashed, or \
                the file name of a song in the library). A malformed line rejects the whole \
                file, naming the line, and leaves the library unchanged.
                """)

        @OptionGroup var library: LibraryOptions
        @OptionGroup var output: OutputOptions

        @Argument(help: ArgumentHelp("The CSV file.", valueName: "file.csv"))
        var file: String

        func run() throws {
            let store = try library.open(.existing)
            let count = try reportingStoreErrors { try store.importReferences(csvAt: file) }
            if output.json {
                try Output.jsonLine(ImportSummary(file: file, imported: count))
            } else {
                print("imported \(count) reference tempi from \(file)")
            }
        }
    }

    struct ImportSummary: Encodable {
        var file: String
        var imported: Int
    }
}
