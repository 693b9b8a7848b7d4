import Hummingbird
import TactusModel
import TactusProtocol

/// `POST /api/v1/playlist?name=run.fit&by=cadence|heart-rate`: a playlist that follows the
/// workout (GPX, TCX, FIT) or accelerometer recording (CSV) sent as the body, as `tactus playlist
/// --follow` builds it. The gateway parses nothing: the coordinator has the file read in its
/// service host (the `cadence` request), and the gateway cuts the report into stretches of steady
/// cadence (or heart-rate zone) and asks for the playlist of that profile.
struct FollowedPlaylist {
    /// The largest workout taken, in bytes: a day at one sample a second in verbose XML.
    static let maximumBytes = 64 << 20

    let gateway: WebGateway

    /// The playlist that follows the workout in `request`'s body, sent by `client`
    /// (``UploadAdmission/client(of:)``, whose uploads share the gateway's places).
    func response(_ request: Request, client: String?) async throws(HTTPFailure) -> Response {
        let parameters = QueryParameters(request)
        let name = parameters.text("name") ?? "the workout"
        let shownName = QueryParameters.shown(name)
        let by = parameters.text("by") ?? "cadence"
        guard by == "cadence" || by == "heart-rate" else {
            throw HTTPFailure(.badRequest, .badRequest, "by: '\(QueryParameters.shown(by))' is not cadence or heart-rate")
        }
        let maximumHeartRate = try parameters.number("max_heart_rate")
        if let maximumHeartRate, !(60...250).contains(maximumHeartRate) {
            throw HTTPFailure(.badRequest, .badRequest, "max_heart_rate: must be 60 to 250 beats per minute")
        }
        let tolerance = try parameters.number("tolerance"), detector = parameters.text("detector")
        try LibraryRequests.check(PlaylistQuery(cadence: 170, tolerance: tolerance, detector: detector), command: "playlist")

        let workout = try await body(of: request, name: shownName, client: client)
        let report = try await gateway.ask { try $0.cadence(of: workout, name: name) }
        var followed = report
        if by == "heart-rate" {
            guard let tempo = HeartRateZones(maximumHeartRate: maximumHeartRate).tempoReport(report) else {
                throw HTTPFailure(.unprocessableContent, .badRecording, "\(shownName): no heart rate to follow in the \(report.format.rawValue) file")
            }
            followed = tempo
        } else if let reason = report.cadenceIsNotSteps {
            throw HTTPFailure(.unprocessableContent, .badRecording, "\(shownName): \(reason); follow its heart rate instead (by=heart-rate)")
        }
        let stretches = followed.steadyStretches()
        guard !stretches.isEmpty else {
            throw HTTPFailure(.unprocessableContent, .badRecording, "\(shownName): no steps found: the recording has no cadence to follow")
        }
        let query = PlaylistQuery(profile: stretches.profile(), tolerance: tolerance, detector: detector)
        try LibraryRequests.check(query, command: "playlist")
        let playlist = try await gateway.ask { try $0.playlist(query) }
        return JSONText.response(PlaylistResponse(playlist: playlist))
    }

    /// The request's body, at most ``maximumBytes``, within the gateway's limits on uploads at once.
    private func body(of request: Request, name: String, client: String?) async throws(HTTPFailure) -> [UInt8] {
        let declared = request.headers[.contentLength].flatMap(Int.init)
        if let declared, declared > Self.maximumBytes {
            throw HTTPFailure(.contentTooLarge, .tooLarge, "\(name): \(declared) bytes, over the limit of \(Self.maximumBytes) bytes")
        }
        let pass = try gateway.uploads.admit(declaredBytes: declared, name: name, client: client)
        defer { pass.end() }
        var bytes: [UInt8] = []
        do {
            try await IdleLimitedBody(request.body, name: name).forEach { piece in
                guard bytes.count + piece.readableBytes <= Self.maximumBytes else {
                    throw HTTPFailure(.contentTooLarge, .tooLarge, "\(name): over the limit of \(Self.maximumBytes) bytes")
                }
                try pass.hold(total: bytes.count + piece.readableBytes)
                bytes.append(contentsOf: piece.readableBytesView)
            }
        } catch let failure as HTTPFailure {
            throw failure
        } catch {
            throw HTTPFailure(.badRequest, .badRequest, "\(name): the body did not arrive whole (\(error))")
        }
        guard !bytes.isEmpty else {
            throw HTTPFailure(.unprocessableContent, .empty, "\(name): no bytes (send the workout's file as the request body)")
        }
        return bytes
    }
}
