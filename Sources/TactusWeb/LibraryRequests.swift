import TactusModel
import TactusProtocol

/// The protocol requests that query strings stand for, with the protocol's wire names
/// (`min_bpm`, `max_bpm`, `octave`...), checked as the coordinator checks them so that a bad
/// value is answered at once with the same message.
enum LibraryRequests {
    /// The whole tempo range: the library page lists every song with a tempo by default.
    static let allBPM: ClosedRange<Double> = 1...1000

    static func query(_ parameters: QueryParameters, defaultLimit: Int = 100) throws(HTTPFailure) -> QueryRequest {
        let request = QueryRequest(
            minBpm: try parameters.number("min_bpm") ?? allBPM.lowerBound,
            maxBpm: try parameters.number("max_bpm") ?? allBPM.upperBound,
            detector: parameters.text("detector"), agree: try parameters.integer("agree"), octave: try parameters.flag("octave"),
            order: parameters.text("order"), descending: try parameters.flag("descending"),
            limit: try parameters.integer("limit") ?? defaultLimit, offset: try parameters.integer("offset"),
            histogram: try parameters.number("histogram"), stable: try parameters.flag("stable"))
        try check(request, command: "query")
        return request
    }

    static func playlist(_ parameters: QueryParameters) throws(HTTPFailure) -> PlaylistQuery {
        let request = PlaylistQuery(
            cadence: try parameters.number("cadence"), minutes: try parameters.number("minutes"), profile: parameters.text("profile"),
            tolerance: try parameters.number("tolerance"), detector: parameters.text("detector"))
        try check(request, command: "playlist")
        return request
    }

    static func compare(_ parameters: QueryParameters, song: String? = nil) throws(HTTPFailure) -> CompareRequest {
        let request = CompareRequest(song: song, binWidth: try parameters.number("bin_width"))
        try check(request, command: "compare")
        return request
    }

    static func status(_ parameters: QueryParameters) throws(HTTPFailure) -> StatusRequest {
        let job: Int64? = try parameters.integer("job").map(Int64.init)
        let request = StatusRequest(job: job, song: parameters.text("song"))
        try check(request, command: "status")
        return request
    }

    /// `id` checked as a song's id (or prefix), the error naming `command`, the request's.
    static func song(_ id: String, command: String = "result") throws(HTTPFailure) -> String {
        try check(ResultRequest(song: id), command: command)
        return id
    }

    static func check<T: WireBody>(_ body: T, command: String) throws(HTTPFailure) {
        do throws(ProtocolError) {
            try body.validate(command: command)
        } catch {
            throw HTTPFailure(error.body)
        }
    }
}
