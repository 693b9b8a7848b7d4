import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TactusClient
import TactusDetector
import TactusModel
import TactusPlot
import TactusProtocol

/// The HTTP API under `/api/v1`: each endpoint one client request of the wire protocol, with
/// its wire names in query strings and bodies, its replies as the protocol's JSON bodies, its
/// errors as the protocol's `error` body with a fitting HTTP status. `openapi.yaml` describes it.
struct APIRoutes: Sendable {
    let gateway: WebGateway

    func register(on router: Router<GatewayContext>) {
        let api = router.group("api/v1")
        api.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_yaml)))
        }
        api.get("songs") { request, _ in await handle { try await songs(request) } }
        api.post("songs") { request, context in await handle { try await upload(request, context: context) } }
        api.get("songs/:song") { request, context in
            await handle {
                let song = try LibraryRequests.song(context.parameters.get("song") ?? "")
                let compare = try await gateway.ask { try $0.compare(CompareRequest(song: song)) }
                return JSONText.response(compare)
            }
        }
        api.get("songs/:song/result") { request, context in
            await handle {
                let song = try LibraryRequests.song(context.parameters.get("song") ?? "")
                let parameters = QueryParameters(request)
                let windows = try parameters.flag("windows")
                let result = try await gateway.ask { try $0.result(ResultRequest(song: song, windows: windows)).response }
                return JSONText.response(result)
            }
        }
        api.get("songs/:song/figure.svg") { request, context in
            await handle {
                let song = try LibraryRequests.song(context.parameters.get("song") ?? "")
                let figure = try await SongFigureSource(gateway: gateway).figure(song: song)
                return Response(
                    status: .ok, headers: [.contentType: "image/svg+xml; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: figure.svg)))
            }
        }
        api.get("compare") { request, _ in
            await handle {
                let compare = try LibraryRequests.compare(QueryParameters(request))
                return JSONText.response(try await gateway.ask { try $0.compare(compare) })
            }
        }
        api.get("playlist") { request, _ in await handle { try await playlist(request) } }
        api.get("export/rekordbox.xml") { request, _ in await handle { try await rekordbox(request) } }
        api.post("playlist") { request, context in
            await handle { try await FollowedPlaylist(gateway: gateway).response(request, client: UploadAdmission.client(of: context.remoteAddress)) }
        }
        api.get("status") { request, _ in
            await handle {
                let status = try LibraryRequests.status(QueryParameters(request))
                return JSONText.response(try await gateway.ask { try $0.status(job: status.job, song: status.song) })
            }
        }
        api.get("detectors") { _, _ in
            await handle { JSONText.response(try await gateway.ask { try $0.detectors() }) }
        }
        api.get("events") { request, _ in
            await handle { try events(request) }
        }
        router.get("metrics") { _, _ in
            let status = try? await gateway.ask { try $0.status() }
            let detectors = try? await gateway.ask { try $0.detectors() }
            gateway.metrics.update(status: status?.server, detectors: detectors)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: gateway.metrics.text())))
        }
        api.get("**") { request, _ in
            HTTPFailure(.notFound, .notFound, "no such endpoint: \(request.uri.path) (see /api/v1/openapi.yaml)").response()
        }
    }

    /// `GET /api/v1/songs`: the songs whose tempo lies in a range (all of them by default).
    private func songs(_ request: Request) async throws(HTTPFailure) -> Response {
        let query = try LibraryRequests.query(QueryParameters(request))
        return JSONText.response(try await gateway.ask { try $0.songList(query) })
    }

    /// `GET /api/v1/export/rekordbox.xml?min_bpm=&max_bpm=&stable=`: the songs whose consensus
    /// tempo is in the range as a rekordbox XML collection (``RekordboxCollection``), asked of
    /// the coordinator a page at a time (``TempoOrderPaging``: a scan may add songs meanwhile);
    /// `Tactus-Omitted` counts the songs left out (no path). A parameter of the song list that
    /// an export does not apply (`limit`, `order`, ...) is refused rather than ignored.
    private func rekordbox(_ request: Request) async throws(HTTPFailure) -> Response {
        let parameters = QueryParameters(request)
        if let name = Self.songListOnly.first(where: { parameters.text($0) != nil }) {
            throw HTTPFailure(
                .badRequest, .badRequest,
                "\(name): an export holds every song in its range, so it takes only min_bpm, max_bpm and stable")
        }
        var query = try LibraryRequests.query(parameters, defaultLimit: Self.exportPage)
        query.order = TempoOrder.bpm.rawValue
        do {
            return try await gateway.exports.run { [query] in try await rekordbox(query) }
        } catch {
            throw HTTPFailure.from(error)
        }
    }

    /// The rekordbox collection of the songs of `query`'s range, read a page at a time, each
    /// page halved while the coordinator answers that it would be `too-large` (long tags and paths).
    private func rekordbox(_ query: QueryRequest) async throws(HTTPFailure) -> Response {
        var paging = TempoOrderPaging(from: query.minBpm, pageSize: Self.exportPage)
        while !paging.isComplete {
            var request = query
            request.minBpm = paging.lower
            request.offset = paging.skip
            request.limit = paging.pageSize
            do {
                paging.take(try await gateway.ask { [request] in try $0.query(request) })
            } catch let failure where failure.body.code == .tooLarge && paging.halvePage() {
                continue
            }
        }
        let songs = paging.songs
        let ranged = query.minBpm > LibraryRequests.allBPM.lowerBound || query.maxBpm < LibraryRequests.allBPM.upperBound
        let name = ranged ? "Tactus \(HTML.number(query.minBpm))-\(HTML.number(query.maxBpm)) BPM" : "Tactus"
        let (xml, omitted) = RekordboxCollection(songs, playlistName: name, productVersion: TactusVersion.current).xml()
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/xml; charset=utf-8", .contentDisposition: "attachment; filename=\"tactus-rekordbox.xml\"",
                Self.omittedHeader: "\(omitted.count)",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// Songs asked of the coordinator at a time for an export.
    static let exportPage = 2_000

    /// The parameters of `GET /api/v1/songs` that an export does not take.
    static let songListOnly = ["limit", "offset", "order", "descending", "detector", "agree", "octave", "histogram"]

    /// `POST /api/v1/songs?name=FILE`: a song's bytes as the body, submitted for analysis. The
    /// body is spooled as it arrives (``UploadSpool``), within the gateway's limits on uploads at
    /// once (``UploadAdmission``), then sent to the coordinator.
    private func upload(_ request: Request, context: GatewayContext) async throws(HTTPFailure) -> Response {
        let parameters = QueryParameters(request)
        let name = parameters.text("name") ?? request.headers[.contentDisposition].flatMap(Self.fileName(disposition:))
        let shownName = name.map(QueryParameters.shown) ?? "the upload"
        let detectors = parameters.text("detectors").map { $0.split(separator: ",").map(String.init) }
        let submit = SubmitRequest(name: name, detectors: detectors, force: try parameters.flag("force"))
        try LibraryRequests.check(submit, command: "submit")
        do {
            let limit = gateway.configuration.maxUploadBytes
            let declared = request.headers[.contentLength].flatMap(Int.init)
            if let declared, declared > limit {
                throw HTTPFailure(.contentTooLarge, .tooLarge, "\(shownName): \(declared) bytes, over the limit of \(limit) bytes")
            }
            let pass = try gateway.uploads.admit(
                declaredBytes: declared, name: shownName, client: UploadAdmission.client(of: context.remoteAddress))
            defer { pass.end() }
            let spool = try UploadSpool(in: gateway.configuration.spoolDirectory)
            do {
                try await IdleLimitedBody(request.body, name: shownName).forEach { piece in
                    guard spool.size + piece.readableBytes <= limit else {
                        throw HTTPFailure(.contentTooLarge, .tooLarge, "\(shownName): over the limit of \(limit) bytes")
                    }
                    try pass.hold(total: spool.size + piece.readableBytes)
                    try spool.append(piece)
                }
            } catch let failure as HTTPFailure {
                throw failure
            } catch {
                throw HTTPFailure(.badRequest, .badRequest, "\(shownName): the body did not arrive whole (\(error))")
            }
            guard spool.size > 0 else {
                throw HTTPFailure(
                    .unprocessableContent, .empty, "\(shownName): no bytes (send the song's file as the request body)")
            }
            let song = spool.finish()
            let response = try await gateway.connections.run { client in try client.submit(submit, spooled: song) }
            return JSONText.response(response, status: .accepted)
        } catch {
            let failure = HTTPFailure.from(error)
            gateway.metrics.recordRefusal(code: failure.body.code.rawValue)
            throw failure
        }
    }

    /// The file name of a `Content-Disposition: attachment; filename="x.flac"` header.
    static func fileName(disposition: String) -> String? {
        guard let range = disposition.range(of: "filename=") else { return nil }
        var name = disposition[range.upperBound...].split(separator: ";").first.map(String.init) ?? ""
        name = name.trimmingCharacters(in: .whitespaces)
        if name.hasPrefix("\"") && name.hasSuffix("\"") && name.count >= 2 { name = String(name.dropFirst().dropLast()) }
        return name.isEmpty ? nil : name
    }

    /// `GET /api/v1/playlist`: songs for a cadence or a profile, as JSON or M3U8.
    private func playlist(_ request: Request) async throws(HTTPFailure) -> Response {
        let parameters = QueryParameters(request)
        let format = parameters.text("format") ?? "json"
        guard format == "json" || format == "m3u8" else {
            throw HTTPFailure(.badRequest, .badRequest, "format: '\(QueryParameters.shown(format))' is not json or m3u8")
        }
        let query = try LibraryRequests.playlist(parameters)
        let playlist = try await gateway.ask { try $0.playlist(query) }
        guard format == "m3u8" else { return JSONText.response(PlaylistResponse(playlist: playlist)) }
        let title = query.profile.map { "Tactus run \($0)" } ?? "Tactus run at \(SVGNumber.format(query.cadence ?? 0)) steps per minute"
        let file = "tactus-" + (query.profile ?? "\(SVGNumber.format(query.cadence ?? 0))spm")
            .map { $0.isLetter || $0.isNumber || $0 == "@" || $0 == "." ? String($0) : "-" }.joined() + ".m3u8"
        let (text, omitted) = Self.m3u8(playlist, title: title)
        var headers: HTTPFields = [.contentType: "audio/x-mpegurl; charset=utf-8", .contentDisposition: "attachment; filename=\"\(file)\""]
        headers[Self.omittedHeader] = String(omitted.count)
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// `Tactus-Omitted`: how many songs of a playlist its M3U8 (or of an export its collection) leaves out.
    static let omittedHeader = HTTPField.Name("Tactus-Omitted")!

    /// A playlist's M3U8, each song at its first path under the server's library roots (absolute:
    /// a download has no folder to be relative to). Songs without one (uploaded songs) are left
    /// out, as `tactus playlist --m3u8` leaves them, and named in a comment each at the end.
    static func m3u8(_ playlist: Playlist, title: String) -> (text: String, omitted: [M3U8.Omission]) {
        let songs = playlist.entries.map { M3U8.Song($0.match, path: $0.match.paths.first) }
        var (text, omitted) = M3U8(songs, title: title).text(inFolder: "/", relative: false)
        for omission in omitted {
            text += M3U8.comment("not listed: song \(omission.song.song.short) (\(omission.song.file)): \(omission.reason)") + "\n"
        }
        return (text, omitted)
    }

    /// Events that wait, copied, for an event stream whose client does not read them.
    static let eventsWaitingPerStream = 16

    /// `GET /api/v1/events`: the coordinator's events as Server-Sent Events (`event:` its
    /// name, `data:` its JSON body), optionally only those of one `song`.
    private func events(_ request: Request) throws(HTTPFailure) -> Response {
        let song = QueryParameters(request).text("song")
        if let song { _ = try LibraryRequests.song(song, command: "events") }
        guard let stream = gateway.events.stream() else {
            throw HTTPFailure(
                .serviceUnavailable, .busy, "\(EventHub.maxStreams) event streams are open, the most the gateway keeps; try again later",
                retryAfterMs: 10_000)
        }
        // A subscriber that does not read loses the oldest events (SPEC section 5), as the hub's
        // own stream does: at most 16 wait here, each copied for this stream and of at most
        // 64 KiB (EventHub.maxStreamedEventBytes), so 256 streams that never read hold 256 MiB
        // at the very most.
        let body = AsyncStream<ByteBuffer>(bufferingPolicy: .bufferingNewest(Self.eventsWaitingPerStream)) { continuation in
            let task = Task {
                continuation.yield(ByteBuffer(string: "retry: 2000\n: connected to \(gateway.configuration.events)\n\n"))
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await message in stream where song == nil || message.song?.hex.hasPrefix(song!) == true {
                            continuation.yield(ByteBuffer(string: "event: \(message.name)\ndata: \(message.json)\n\n"))
                        }
                    }
                    group.addTask {
                        // A comment every 15 s keeps proxies from closing a quiet stream.
                        while !Task.isCancelled {
                            try? await Task.sleep(for: .seconds(15))
                            continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                    await group.next()
                    group.cancelAll()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"],
            body: ResponseBody(asyncSequence: body))
    }
}

/// Runs a handler, answering its failure as the protocol's JSON error.
func handle(_ body: () async throws -> Response) async -> Response {
    do {
        return try await body()
    } catch {
        return HTTPFailure.from(error).response()
    }
}
