import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TactusClient
import TactusModel
import TactusProtocol

/// `tactus web`: the HTTP gateway. Pages, the HTTP API under `/api/v1` and `/metrics`, each
/// request answered by asking the coordinator over the wire protocol (``CoordinatorConnections``),
/// live updates from its events (``EventHub``). It never opens the library file.
///
/// ```swift
/// let gateway = try WebGateway(configuration: WebConfiguration(frontend: f, events: e), logger: logger)
/// try await gateway.run()
/// ```
public final class WebGateway: Sendable {
    public let configuration: WebConfiguration
    public let connections: CoordinatorConnections
    public let events: EventHub
    public let metrics: GatewayMetrics
    /// The host names the gateway answers.
    let hosts: AllowedHosts
    let sessions = LoginSessions()
    let guesses = TokenGuesses()
    let uploads: UploadAdmission
    let exports = ExportAdmission(maxExports: WebGateway.exportsAtOnce)
    let connectionPlaces: HTTPConnectionPlaces
    let logger: Logger

    public init(configuration: WebConfiguration, logger: Logger) throws(ClientError) {
        self.configuration = configuration
        self.logger = logger
        connections = try CoordinatorConnections(server: configuration.frontend, curve: configuration.curve, timeout: configuration.timeout)
        events = EventHub(endpoint: configuration.events, connections: connections, logger: logger)
        metrics = GatewayMetrics()
        hosts = AllowedHosts(listeningOn: configuration.host, extra: configuration.allowedHosts)
        uploads = UploadAdmission(maxUploads: configuration.maxUploads, maxBytes: configuration.maxUploadBytesInFlight)
        connectionPlaces = HTTPConnectionPlaces(
            maxConnections: configuration.maxConnections, maxPerAddress: configuration.maxConnectionsPerAddress)
        let metrics = metrics
        let connections = connections
        events.observe { message in
            metrics.record(message.event)
            // The analysis seconds of a finished song come with its stored analyses.
            if case .songDone(let done) = message.event, done.jobs.contains(where: { $0.state == .done }) {
                Task {
                    guard let result = try? await connections.run({ try $0.result(ResultRequest(song: done.song)).response }) else { return }
                    let finished = Set(done.jobs.filter { $0.state == .done && $0.job != 0 }.map(\.detector))
                    for analysis in result.analyses where finished.contains(analysis.detector) {
                        metrics.recordAnalysis(detector: analysis.detector, seconds: analysis.seconds)
                    }
                }
            }
        }
    }

    /// The router of every page and endpoint.
    public func router() -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self)
        router.add(middleware: AccessMiddleware(token: configuration.token, hosts: hosts, sessions: sessions, guesses: guesses))
        APIRoutes(gateway: self).register(on: router)
        PageRoutes(gateway: self).register(on: router)
        LoginRoutes(token: configuration.token, sessions: sessions, guesses: guesses).register(on: router)
        return router
    }

    /// Serves until the task is cancelled or the process gets SIGINT/SIGTERM; `onListening` gets the bound URL.
    public func run(onListening: @escaping @Sendable (String) -> Void = { _ in }) async throws {
        try events.start()
        defer { events.stop() }
        let announceFile = configuration.announceFile
        let host = configuration.host
        let places = connectionPlaces
        let logger = logger
        let app = Application(
            router: router(),
            // A connection without a request in progress (idle, or sending its headers byte by
            // byte) is closed after idleTimeout; an events stream is a request in progress. Each
            // connection holds a place (HTTPConnectionPlaces) and at most maxHeaderBytes of headers.
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [places.handler(logger: logger)],
                    idleTimeout: .seconds(Int64(Self.idleTimeout.components.seconds)),
                    httpDecoderConfiguration: .init(
                        maxHeaderFieldSize: Self.maxHeaderBytes, maxHeaderListSize: Self.maxHeaderBytes, maxHeaderFieldCount: 100))),
            configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "tactus"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shownHost = host.contains(":") ? "[\(host)]" : host
                let url = "http://\(shownHost):\(port)/"
                if let announceFile {
                    let json = "{\"url\":\"\(url)\"}\n"
                    FileManager.default.createFile(atPath: announceFile + ".tmp", contents: Data(json.utf8))
                    _ = rename(announceFile + ".tmp", announceFile)
                }
                onListening(url)
            },
            logger: logger)
        // On SIGTERM or SIGINT the events streams end first (services stop in reverse order):
        // the server waits for the requests in progress, and an events stream never ends by itself.
        let group = ServiceGroup(
            configuration: .init(
                services: [app, EventStreamsEnder(hub: events)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// The exports of the library made at once (``ExportAdmission``).
    static let exportsAtOnce = 2

    /// How long a connection without a request in progress is kept.
    public static let idleTimeout: Duration = .seconds(30)

    /// The most bytes of headers a request may carry (431-like 400 beyond): the API's are a few
    /// hundred bytes (the token, a login cookie), and a connection sending its headers slowly
    /// holds them until they end.
    public static let maxHeaderBytes = 16 * 1024

    /// Ends every events stream when the gateway is asked to stop.
    private struct EventStreamsEnder: Service {
        let hub: EventHub

        func run() async throws {
            try? await gracefulShutdown()
            hub.stop()
        }
    }

    /// The coordinator's answer to `body`, or the HTTP failure it amounts to.
    func ask<T: Sendable>(_ body: @escaping @Sendable (TactusClient) throws -> T) async throws(HTTPFailure) -> T {
        do {
            return try await connections.run(body)
        } catch {
            throw HTTPFailure.from(error)
        }
    }
}
