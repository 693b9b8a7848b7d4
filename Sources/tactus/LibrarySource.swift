import Foundation
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

    /// The songs whose tempo lies in the query's range. Over the server, a page at a time until
    /// a page comes short, each song kept once: pages of 1000 songs (a request may ask for
    /// 10,000, more than a reply may carry with long titles and paths), halved while the server
    /// answers that a page would be `too-large`.
    func query(_ query: TempoQuery) throws -> [TempoMatch] {
        try reportingFailures {
            switch self {
            case .file(let service):
                return try service.query(query).songs
            case .server(let client):
                var pageSize = 1000
                var songs: [TempoMatch] = [], seen: Set<SongID> = []
                var offset = query.offset
                while true {
                    var request = QueryRequest(query)
                    request.offset = offset
                    request.limit = min(query.limit.map { $0 - songs.count } ?? pageSize, pageSize)
                    let page: [TempoMatch]
                    do {
                        page = try client.query(request)
                    } catch ClientError.rejected(let refusal) where refusal.code == .tooLarge && pageSize > 1 {
                        pageSize /= 2
                        continue
                    }
                    songs += page.filter { seen.insert($0.song).inserted }
                    offset += page.count
                    guard page.count == request.limit, offset <= TempoQuery.maxOffset, songs.count < query.limit ?? .max else {
                        return songs
                    }
                }
            }
        }
    }

    /// One song's results side by side; `song` is any name ``SongLookup`` resolves.
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

    /// The reference tempo of `song` (any name ``SongLookup`` resolves), set to `bpm` first
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

    /// A song's stored analyses (`request.song` a full SHA-256), and its envelope when asked for.
    func result(_ request: ResultRequest) throws -> (ResultResponse, envelope: [Float]?) {
        try reportingFailures {
            switch self {
            case .file(let service): return try service.result(request)
            case .server(let client): return try client.result(request)
            }
        }
    }

    /// The resolution of each name (see ``SongLookup``).
    func resolve(_ names: [String]) throws -> [SongResolution] {
        switch self {
        case .file(let service): try SongLookup.resolve(names, in: service)
        case .server(let client): try SongLookup.resolve(names, on: client)
        }
    }

    /// What to ask for the one song `name` stands for, as every command names songs (see
    /// ``SongLookup/songName(_:on:)``).
    func songName(_ name: String) throws -> String {
        if SongLookup.isID(name) { return name }
        return try SongLookup.song(try resolve([name])[0]).hex
    }
}
