import TactusDetector
import TactusProtocol
import TactusStore

/// A client request that only reads the library, answered on a background thread: it needs
/// nothing of the loop's state, only the library's read pool.
enum LibraryRead: Sendable {
    /// The state of one job (`status --job`).
    case job(Int64)
    /// The jobs of one song (`status SONG`).
    case jobs(song: String)
    case result(ResultRequest)
    case query(QueryRequest)
    case compare(CompareRequest)
    case playlist(PlaylistQuery)

    /// The answer, read from `library`.
    func answer(from library: Library) throws -> ClientReply.Response {
        switch self {
        case .job(let id):
            guard let record = try library.job(id) else { throw ErrorBody(code: .notFound, message: "no job \(id)") }
            return .status(StatusResponse(jobs: [JobInfo(record)]))
        case .jobs(let song): return .status(StatusResponse(jobs: try library.jobs(of: try library.resolveSongID(song)).map(JobInfo.init)))
        case .result(let request):
            let (response, envelope) = try Self.result(request, library)
            return .result(response, envelope: envelope)
        case .query(let request): return .query(SongList(songs: try library.query(request.tempoQuery)))
        case .compare(let request):
            guard let song = request.song else {
                return .compare(CompareResponse(library: try library.compareLibrary(binWidth: request.binWidth ?? 10)))
            }
            return .compare(CompareResponse(song: try library.compare(try library.resolveSongID(song))))
        case .playlist(let request):
            return .playlist(PlaylistResponse(playlist: try library.playlist(try request.playlistRequest())))
        }
    }

    private static func result(_ request: ResultRequest, _ library: Library) throws -> (ResultResponse, [Float]?) {
        let song = try library.resolveSongID(request.song)
        guard let record = try library.song(song) else { throw ErrorBody(code: .notFound, message: "unknown song \(request.song)") }
        let wanted = request.detectors.map(Set.init)
        let stored = try library.analyses(of: song, windows: request.windows ?? false)
            .filter { wanted?.contains($0.record.analysis.detector) ?? true && $0.record.status != .failed }
        let active = try library.jobs(of: song).filter { $0.state.isActive }.map(\.detector)
        let envelope = request.envelope == true ? record.envelope : nil
        let response = ResultResponse(
            song: song.hex, name: record.fileName, durationS: record.durationS, analyses: stored.map(\.record.analysis),
            pending: Array(Set(active)).sorted(), consensus: try library.consensus(of: song) ?? ConsensusTempo(bpm: nil, detectors: []),
            envelopeHopS: envelope?.hopS)
        return (response, envelope?.values)
    }
}
