import ArgumentParser
import TactusClient
import TactusModel
import TactusProtocol
import TactusStore

extension Tactus {
    /// `tactus truth`: the reference tempi detectors are measured against.
    struct Truth: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "truth",
            abstract: "Set or import reference tempi (the tempo a person asserts for a song).",
            discussion: """
                With --db, works on the library file; otherwise asks the server (--server). \
                `import` sets a whole file's tempi, or none of them.
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

        /// `tactus truth [--db PATH] import FILE.csv`
        struct Import: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Import reference tempi from a CSV file, all or nothing.",
                discussion: """
                    The header names a bpm column and either a song column (SHA-256 or a prefix of \
                    at least 8 hex digits) or a file column (a path relative to the CSV, hashed, or \
                    the file name of a song in the library). A malformed line, or a song the library \
                    does not have, rejects the whole file, naming the line, and leaves the library \
                    unchanged. A server takes at most 5000 tempi at once (truth-import).
                    """)

            @OptionGroup var source: LibrarySourceOptions
            @OptionGroup var output: OutputOptions

            @Argument(help: ArgumentHelp("The CSV file.", valueName: "file.csv"))
            var file: String

            func run() throws {
                let count: Int
                switch try LibrarySource(source, mode: .existing) {
                case .file(let service): count = try reportingFailures { try service.library.importReferences(csvAt: file) }
                case .server(let client): count = try reportingFailures { try Self.importReferences(csvAt: file, on: client) }
                }
                if output.json {
                    try Output.jsonLine(ImportSummary(file: file, imported: count))
                } else {
                    print("imported \(count) reference tempi from \(file)")
                }
            }

            /// Imports the CSV at `path` on the server, all or nothing: its files hashed here, its
            /// names resolved by the server, a line naming no song refused here (naming the line)
            /// before anything is set; then one `truth-import` sets them all.
            static func importReferences(csvAt path: String, on client: TactusClient) throws -> Int {
                let csv = try ReferenceCSV.read(path)
                guard !csv.rows.isEmpty else { return 0 }
                guard csv.rows.count <= TruthImportRequest.maxReferences else {
                    throw CommandFailure(
                        "\(path): \(csv.rows.count) reference tempi; a server imports at most \(TruthImportRequest.maxReferences) "
                            + "at once: split the file, or import it with --db into a library no server has open")
                }
                let names = csv.rows.map { row in
                    switch row.song {
                    case .id(let id): id
                    case .content(_, let song): song.hex
                    case .file(let name): name
                    }
                }
                let found = try SongNames.resolve(names, hashingFilesHere: false) { try client.resolve(ResolveRequest(names: $0)) }
                var references = [TruthReference]()
                for (row, resolution) in zip(csv.rows, found) {
                    guard let song = resolution.song else {
                        throw StoreError.malformedCSV(file: csv.fileName, line: row.line, reason: reason(row, resolution))
                    }
                    references.append(TruthReference(song: song, bpm: row.bpm))
                }
                return try client.truthImport(TruthImportRequest(source: Self.source(csv), references: references))
            }

            /// The source recorded with the tempi, `csv:NAME`, its name cut at a character so that
            /// it keeps to the request's 255 bytes.
            static func source(_ csv: ReferenceCSV) -> String {
                var source = csv.source
                while source.utf8.count > 255 { source.removeLast() }
                return source
            }

            /// Why `row` names no song: as `--db` says it for a file beside the CSV, else as the
            /// server's `resolve` does.
            private static func reason(_ row: ReferenceCSV.Row, _ resolution: SongResolution) -> String {
                if case .content(let file, _) = row.song, resolution.problem?.code == .notFound {
                    return "the file \(file) is not in the library"
                }
                return SongLookup.message(resolution).joined(separator: "\n")
            }
        }

        struct ImportSummary: Encodable {
            var file: String
            var imported: Int
        }
    }
}
