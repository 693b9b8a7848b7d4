import ArgumentParser
import TactusStore

extension Tactus {
    /// `tactus truth`: the reference tempi detectors are measured against.
    struct Truth: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "truth",
            abstract: "Set or import reference tempi (the tempo a person asserts for a song).",
            discussion: """
                With --db, works on the library file; otherwise `set` asks the server (--server). \
                `import` needs --db: a file is imported all or nothing, which one request per \
                line to a server could not promise.
                """,
            subcommands: [Set.self, Import.self])

        @OptionGroup var source: LibrarySourceOptions

        /// `tactus truth [--db PATH] set SONG BPM`
        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Set the reference tempo of one song.")

            @OptionGroup var source: LibrarySourceOptions
            @OptionGroup var output: OutputOptions

            @Argument(help: ArgumentHelp("A SHA-256, a prefix of at least 8 hex digits, or a file.", valueName: "song"))
            var song: String

            @Argument(help: "The tempo, in 1...1000 BPM.")
            var bpm: Double

            func run() throws {
                guard let reference = try LibrarySource(source, mode: .existing).truth(song: song, setting: bpm) else {
                    throw CommandFailure("\(song): the reference tempo was not kept")
                }
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

            func validate() throws {
                if library.path == nil {
                    throw ValidationError(
                        "truth import needs --db PATH: a server could not import a file all or nothing; "
                            + "set songs one by one with `tactus truth set` instead")
                }
            }

            func run() throws {
                guard let path = library.path else { return }
                let store = try LibraryOptions.open(path, .existing)
                let count = try reportingFailures { try store.importReferences(csvAt: file) }
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
}
