import Foundation
import TactusAudio
import TactusClient
import TactusLibraryService
import TactusModel
import TactusProtocol
import TactusStore

/// Where `query`, `compare`, `playlist` and `truth` get their answers: the library file named
/// by `--db` (answered here by the ``LibraryService`` the server uses), or the server's
/// library. Either way the answers are the same wire types, so a command prints them the same
/// way whichever source gave them.
enum LibrarySource {
    case file(LibraryService)
    case server(TactusClient)

    /// The file when `--db` is given (opened in `mode`; songs may be named by file), the server otherwise.
    init(_ options: LibrarySourceOptions, mode: Library.Mode) throws {
        if let path = options.library.path {
            self = .file(LibraryService(library: try LibraryOptions.open(path, mode), songNames: .idsAndFiles))
        } else {
            self = .server(try reportingFailures { try options.server.client() })
        }
    }

    /// The songs whose tempo lies in the query's range. Over the server a query without a
    /// limit asks for the protocol's most (10,000 songs).
    func query(_ query: TempoQuery) throws -> [TempoMatch] {
        try reportingFailures {
            switch self {
            case .file(let service):
                return try service.query(query).songs
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
            guard let comparison = try compare(CompareRequest(song: try songName(song))).song else {
                throw CommandFailure("the server's answer to compare holds no song")
            }
            return comparison
        }
    }

    /// The detectors compared over the whole library, with a histogram in bins of `binWidth` BPM.
    func compareLibrary(binWidth: Double) throws -> LibraryComparison {
        try reportingFailures {
            guard let comparison = try compare(CompareRequest(binWidth: binWidth)).library else {
                throw CommandFailure("the server's answer to compare holds no library comparison")
            }
            return comparison
        }
    }

    private func compare(_ request: CompareRequest) throws -> CompareResponse {
        switch self {
        case .file(let service): return try service.compare(request)
        case .server(let client): return try client.compare(request)
        }
    }

    /// A playlist for the request's cadence or profile, checked the same way in both modes.
    func playlist(_ request: PlaylistQuery) throws -> Playlist {
        try reportingFailures {
            switch self {
            case .file(let service):
                try request.validate(command: "playlist")
                return try service.playlist(request).playlist
            case .server(let client):
                return try client.playlist(request)
            }
        }
    }

    /// The reference tempo of `song` (a SHA-256, a prefix of one, or a file), set to `bpm` first
    /// when given.
    func truth(song: String, setting bpm: Double?) throws -> ReferenceTempo? {
        try reportingFailures {
            let request = TruthRequest(song: try songName(song), bpm: bpm)
            switch self {
            case .file(let service): return try service.truth(request).reference
            case .server(let client): return try client.truth(request).reference
            }
        }
    }

    /// The name of a song as this source takes it: the library file resolves files itself; the
    /// server is told a file's SHA-256 (it never reads the client's files).
    private func songName(_ name: String) throws -> String {
        guard case .server = self else { return name }
        return try Self.songID(name)
    }

    /// What the server is told for a song a person names: a file's SHA-256 (the server never
    /// reads the client's files), or the name as given (a SHA-256 or a prefix of one).
    private static func songID(_ name: String) throws -> String {
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
