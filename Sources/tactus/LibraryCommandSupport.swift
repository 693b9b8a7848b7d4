import ArgumentParser
import Foundation
import TactusAudio
import TactusClient
import TactusProtocol
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

/// Where `query`, `compare`, `playlist` and `truth` get their answers: the library file named
/// by `--db`, or the server's library. Either way the answers are the store's own types, so
/// a command prints them the same way whichever source gave them.
enum LibrarySource {
    case file(Library)
    case server(TactusClient)

    /// The file when `--db` is given (opened in `mode`), the server otherwise.
    init(_ options: LibrarySourceOptions, mode: Library.Mode) throws {
        if let path = options.library.path {
            self = .file(try LibraryOptions.open(path, mode))
        } else {
            self = .server(try reportingFailures { try options.server.client() })
        }
    }

    /// The songs whose tempo lies in the query's range. Over the server a query without a
    /// limit asks for the protocol's most (10,000 songs).
    func query(_ query: TempoQuery) throws -> [TempoMatch] {
        try reportingFailures {
            switch self {
            case .file(let library):
                return try library.query(query)
            case .server(let client):
                var request = QueryRequest(query)
                request.limit = query.limit ?? 10_000
                return try client.query(request)
            }
        }
    }

    /// One song's results side by side; `song` is a SHA-256, a prefix of one, or a file.
    func compare(song: String) throws -> SongComparison {
        try reportingFailures {
            switch self {
            case .file(let library):
                return try library.compare(try library.resolveSong(song))
            case .server(let client):
                guard let comparison = try client.compare(CompareRequest(song: try Self.songID(song))).song else {
                    throw CommandFailure("the server's answer to compare holds no song")
                }
                return comparison
            }
        }
    }

    /// The detectors compared over the whole library, with a histogram in bins of `binWidth` BPM.
    func compareLibrary(binWidth: Double) throws -> LibraryComparison {
        try reportingFailures {
            switch self {
            case .file(let library):
                return try library.compareLibrary(binWidth: binWidth)
            case .server(let client):
                guard let comparison = try client.compare(CompareRequest(binWidth: binWidth)).library else {
                    throw CommandFailure("the server's answer to compare holds no library comparison")
                }
                return comparison
            }
        }
    }

    /// A playlist for the request's cadence or profile, checked the same way in both modes.
    func playlist(_ request: PlaylistQuery) throws -> Playlist {
        try reportingFailures {
            switch self {
            case .file(let library):
                try request.validate(command: "playlist")
                return try library.playlist(try request.playlistRequest())
            case .server(let client):
                return try client.playlist(request)
            }
        }
    }

    /// The reference tempo of `song` (a SHA-256, a prefix of one, or a file), set to `bpm` first
    /// when given.
    func truth(song: String, setting bpm: Double?) throws -> ReferenceTempo? {
        try reportingFailures {
            switch self {
            case .file(let library):
                let id = try library.resolveSong(song)
                if let bpm { try library.setReference(bpm, for: id) }
                return try library.reference(for: id)
            case .server(let client):
                return try client.truth(TruthRequest(song: try Self.songID(song), bpm: bpm)).reference
            }
        }
    }

    /// What the server is told for a song a person names: a file's SHA-256 (the server never
    /// reads the client's files), or the name as given (a SHA-256 or a prefix of one).
    static func songID(_ name: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return name
        }
        do throws(AudioError) {
            return try SongID(of: .file(name)).hex
        } catch {
            throw CommandFailure(error.description)
        }
    }
}

/// `--json`: JSON (JSON Lines for lists) instead of tables.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON for scripts (JSON Lines, one object per song, for lists).")
    var json = false
}

/// A closed tempo range written `LO..HI` (for example `120..130`).
struct BPMRange: ExpressibleByArgument, Sendable {
    let range: ClosedRange<Double>

    init?(argument: String) {
        let parts = argument.components(separatedBy: "..")
        guard parts.count == 2, let lo = Double(parts[0]), let hi = Double(parts[1]), lo.isFinite, hi.isFinite, lo <= hi
        else { return nil }
        range = lo...hi
    }

    static var defaultValueDescription: String { "LO..HI" }
}

/// Runs `body`; what the library or the server refuses becomes `Error: <message>` on standard
/// error and exit status 1, the same message whichever answered (the server passes the
/// library's message on).
func reportingFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as StoreError {
        throw CommandFailure(error.description)
    } catch let error as ProtocolError {
        throw CommandFailure(error.description)
    } catch ClientError.rejected(let error) {
        throw CommandFailure(error.message)
    } catch let error as ClientError {
        throw CommandFailure(error.description)
    }
}

/// Output for people and for scripts.
enum Output {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()

    /// One JSON object on one line.
    static func jsonLine(_ value: some Encodable) throws {
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A table with a header line, columns padded to their widest cell.
    static func table(_ headers: [String], _ rows: [[String]]) {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(line(headers))
        for row in rows { print(line(row)) }
    }

    static func bpm(_ value: Double?) -> String {
        value.map { String(format: "%.2f", $0) } ?? "-"
    }

    static func factor(_ value: Double) -> String {
        value == 1 ? "1" : value == 0.5 ? "1/2" : String(format: "%g", value)
    }

    static func percent(_ share: Double) -> String {
        String(format: "%.1f %%", share * 100)
    }

    /// `m:ss`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }

    static func warn(_ message: String) {
        FileHandle.standardError.write(Data("tactus: warning: \(message)\n".utf8))
    }
}
