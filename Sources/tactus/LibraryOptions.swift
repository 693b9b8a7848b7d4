import ArgumentParser
import TactusStore

/// `--db PATH`: the library file the commands read and write themselves. Without it, the
/// library commands ask the server (``ServerOptions``).
struct LibraryOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp(
        "The library file (SQLite); without it, ask the server.", valueName: "path"))
    var path: String?

    /// Opens the library at `path`; a missing or unreadable file is a failure (exit 1) with a message.
    static func open(_ path: String, _ mode: Library.Mode) throws -> Library {
        try reportingFailures { try Library(path: path, options: Library.Options(mode: mode)) }
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
