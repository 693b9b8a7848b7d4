import Foundation
import Hummingbird
import TactusModel
import TactusProtocol

/// The pages: server-rendered HTML, each from one or two requests to the coordinator.
struct PageRoutes: Sendable {
    let gateway: WebGateway

    func register(on router: Router<GatewayContext>) {
        router.get("/") { request, _ in
            await page(.library) {
                let parameters = QueryParameters(request)
                let query = try LibraryPage.query(parameters)
                async let answer = gateway.ask { try $0.songList(query) }
                async let detectors = detectorNames()
                let page = LibraryPage(parameters: parameters, query: query, answer: try await answer, detectors: await detectors)
                return page.html()
            }
        }
        router.get("songs/:song") { _, context in
            await page(.library) {
                let song = try LibraryRequests.song(context.parameters.get("song") ?? "")
                return SongPage(figure: try await SongFigureSource(gateway: gateway).figure(song: song)).html()
            }
        }
        router.get("compare") { request, _ in
            await page(.compare) {
                let compare = try LibraryRequests.compare(QueryParameters(request))
                let reply = try await gateway.ask { try $0.compare(compare) }
                guard let library = reply.library else {
                    throw HTTPFailure(.badGateway, .internal, "the coordinator's compare reply has no library")
                }
                return ComparePage(library: library).html()
            }
        }
        router.get("playlist") { request, _ in
            await page(.playlist) {
                let parameters = QueryParameters(request)
                let names = await detectorNames()
                do throws(HTTPFailure) {
                    guard let query = try PlaylistPage.query(parameters) else {
                        return PlaylistPage(parameters: parameters, detectors: names).html()
                    }
                    let playlist = try await gateway.ask { try $0.playlist(query) }
                    return PlaylistPage(parameters: parameters, query: query, playlist: playlist, detectors: names).html()
                } catch where error.status == .badRequest {
                    return PlaylistPage(parameters: parameters, failure: error, detectors: names).html()
                }
            }
        }
        router.get("queue") { _, _ in
            await page(.queue) {
                async let status = gateway.ask { try $0.status() }
                async let detectors = gateway.ask { try $0.detectors() }
                guard let server = try await status.server else {
                    throw HTTPFailure(.badGateway, .internal, "the coordinator's status reply has no server state")
                }
                return QueuePage(status: server, detectors: try await detectors, maxUploadBytes: gateway.configuration.maxUploadBytes).html()
            }
        }
    }

    /// The names of the detectors the coordinator offers (none when it does not answer).
    private func detectorNames() async -> [String] {
        let offered = try? await gateway.ask { try $0.detectors() }
        return (offered?.detectors.map(\.detector.name) ?? []).sorted()
    }

    private func page(_ section: Page.Section, _ body: () async throws -> String) async -> Response {
        do {
            return Page.response(try await body())
        } catch {
            return Page.failure(HTTPFailure.from(error), section: section)
        }
    }
}
