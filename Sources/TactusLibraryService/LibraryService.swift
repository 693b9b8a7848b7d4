import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore

/// The library's answers to the protocol's library requests: a request in, its answer out.
///
/// The coordinator's read threads answer clients with it, and every `--db` command of
/// `tactus` answers itself with it, so a command prints the same whether a library file or a
/// server gave the answer. Requests are taken as decoded (a coordinator validates them while
/// decoding them); errors are the library's (``StoreError``) or the protocol's.
///
/// ```swift
/// let service = LibraryService(library: try Library(path: "lib.sqlite"), songNames: .idsAndFiles)
/// let songs = try service.query(TempoQuery(range: 165...175, octave: true)).songs
/// ```
public struct LibraryService: Sendable {
    /// Which names of songs the service accepts.
    public enum SongNames: Sendable, Hashable {
        /// A SHA-256 or a unique prefix of at least 8 hex digits, never a path: what a server
        /// accepts from its clients.
        case ids
        /// A file too (its bytes are hashed), and a stored file name when only one song has
        /// it: what a command accepts from the person running it.
        case idsAndFiles
    }

    /// A request that reads (or, for `truth` with a tempo and `truth-import`, sets) the library.
    public enum Request: Sendable {
        /// The state of one job (`status --job`).
        case job(Int64)
        /// The jobs of one song (`status SONG`).
        case jobs(song: String)
        case result(ResultRequest)
        case query(QueryRequest)
        case compare(CompareRequest)
        case playlist(PlaylistQuery)
        case truth(TruthRequest)
        case truthImport(TruthImportRequest)
        case resolve(ResolveRequest)
    }

    /// The library read (and, for `truth` with a tempo, written).
    public let library: Library
    /// The names of songs accepted.
    public let songNames: SongNames

    /// A service over `library` accepting `songNames`.
    public init(library: Library, songNames: SongNames = .ids) {
        self.library = library
        self.songNames = songNames
    }

    /// The answer to `request`, as the protocol's reply carries it.
    public func answer(_ request: Request) throws -> ClientReply.Response {
        switch request {
        case .job(let id):
            guard let record = try library.job(id) else { throw ErrorBody(code: .notFound, message: "no job \(id)") }
            return .status(StatusResponse(jobs: [JobInfo(record)]))
        case .jobs(let song): return .status(StatusResponse(jobs: try library.jobs(of: try self.song(song)).map(JobInfo.init)))
        case .result(let request):
            let (response, envelope) = try result(request)
            return .result(response, envelope: envelope)
        case .query(let request): return .query(try query(request.tempoQuery, histogram: request.histogram))
        case .compare(let request): return .compare(try compare(request))
        case .playlist(let request): return .playlist(try playlist(request))
        case .truth(let request): return .truth(try truth(request))
        case .truthImport(let request): return .truthImport(try truthImport(request))
        case .resolve(let request): return .resolve(try resolve(request))
        }
    }

    /// The song a name stands for, as ``songNames`` allows.
    public func song(_ name: String) throws(StoreError) -> SongID {
        switch songNames {
        case .ids: try library.resolveSongID(name)
        case .idsAndFiles: try library.resolveSong(name)
        }
    }

    /// The song each name stands for (see ``ResolveRequest``); a name that names none, or
    /// several, is answered with its problem (and the candidates) without failing the others.
    /// With ``SongNames/idsAndFiles`` a name that is a file here is hashed first.
    public func resolve(_ request: ResolveRequest) throws(StoreError) -> ResolveResponse {
        var songs = [SongResolution]()
        for name in request.names {
            do {
                let found = songNames == .idsAndFiles ? try library.resolve(name) : try library.resolveName(name)
                songs.append(SongResolution(name: name, song: found.song, file: found.file, by: found.by))
            } catch {
                switch error {
                case .unknownSong, .ambiguousSong, .ambiguousName, .invalidSongName, .unreadableFile:
                    songs.append(SongResolution(name: name, error: error))
                default: throw error
                }
            }
        }
        return ResolveResponse(songs: songs)
    }

    /// The songs whose tempo lies in the query's range (every one when it has no limit), and
    /// with `histogram` the histogram of all of them in bins of that many BPM.
    public func query(_ query: TempoQuery, histogram: Double? = nil) throws(StoreError) -> SongList {
        SongList(songs: try library.query(query), histogram: try histogram.map { width throws(StoreError) in try library.histogram(of: query, binWidth: width) })
    }

    /// One song's results side by side, or the whole library compared.
    public func compare(_ request: CompareRequest) throws(StoreError) -> CompareResponse {
        guard let song = request.song else {
            return CompareResponse(library: try library.compareLibrary(binWidth: request.binWidth ?? 10))
        }
        return CompareResponse(song: try library.compare(try self.song(song)))
    }

    /// A playlist for the request's cadence or profile.
    public func playlist(_ request: PlaylistQuery) throws -> PlaylistResponse {
        PlaylistResponse(playlist: try library.playlist(try request.playlistRequest()))
    }

    /// A song's reference tempo, set first when the request gives one.
    public func truth(_ request: TruthRequest) throws(StoreError) -> TruthResponse {
        let song = try self.song(request.song)
        if let bpm = request.bpm { try library.setReference(bpm, for: song) }
        return TruthResponse(song: song, reference: try library.reference(for: song))
    }

    /// Many songs' reference tempi, set all or nothing: a song the library does not have
    /// fails the request with nothing set.
    public func truthImport(_ request: TruthImportRequest) throws(StoreError) -> TruthImportResponse {
        let imported = try library.setReferences(request.references.map { ($0.song, $0.bpm) }, source: request.source)
        return TruthImportResponse(imported: imported)
    }

    /// A song's stored analyses (failed ones left out), the detectors still to run, its
    /// consensus, and its energy envelope when asked for.
    public func result(_ request: ResultRequest) throws -> (ResultResponse, envelope: [Float]?) {
        let song = try self.song(request.song)
        guard let record = try library.song(song) else { throw ErrorBody(code: .notFound, message: "unknown song \(request.song)") }
        let wanted = request.detectors.map(Set.init)
        let stored = try library.analyses(of: song, windows: request.windows ?? false)
            .filter { wanted?.contains($0.record.analysis.detector) ?? true && $0.record.status != .failed }
        let active = try library.jobs(of: song).filter { $0.state.isActive }.map(\.detector)
        let envelope = request.envelope == true ? record.envelope : nil
        let consensus = try library.consensus(of: song) ?? ConsensusTempo(bpm: nil, detectors: [])
        let response = ResultResponse(
            song: song, name: record.fileName, durationS: record.durationS, analyses: stored.map(\.record.analysis),
            pending: Array(Set(active)).sorted(), consensus: consensus, envelopeHopS: envelope?.hopS,
            locations: try library.locations(of: song),
            beatGrid: record.beatGrid.flatMap { $0.agrees(withConsensus: consensus.bpm) ? $0 : nil })
        return (response, envelope?.values)
    }
}
