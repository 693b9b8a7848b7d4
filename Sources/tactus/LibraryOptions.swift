import ArgumentParser
import TactusAnalysis
import TactusStore

/// `--db PATH`: the library file the commands read and write themselves. Without it, the
/// library commands ask the server (``ServerOptions``).
struct LibraryOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp(
        "The library file (SQLite); without it, ask the server.", valueName: "path"))
    var path: String?

    /// Opens the library at `path`; a missing or unreadable file is a failure (exit 1) with a
    /// message, and so is a library another writer has open (a running server) when `mode`
    /// writes.
    static func open(_ path: String, _ mode: Library.Mode) throws -> Library {
        // The built-in advisory detectors' analyses do not vote in the consensus it recomputes.
        let options = Library.Options(
            mode: mode, advisoryDetectors: BuiltinDetectors.registry.advisoryNames, exclusiveWriter: mode != .readOnly)
        return try reportingFailures { try Library(path: path, options: options) }
    }
}

/// `--db PATH`, or `--server` and `--timeout`: where the library commands get their answers.
struct LibrarySourceOptions: ParsableArguments {
    @OptionGroup var library: LibraryOptions
    @OptionGroup var server: ServerOptions

    func validate() throws {
        if library.path != nil && server.server != nil { throw ValidationError("--db and --server are alternatives; give one") }
    }
}
