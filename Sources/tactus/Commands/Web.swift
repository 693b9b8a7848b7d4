import ArgumentParser
import Dispatch
import Foundation
import Logging
import TactusClient
import TactusWeb

extension Tactus {
    /// `tactus web`: the HTTP gateway (pages, the HTTP API, /metrics) of a running server.
    struct Web: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "web",
            abstract: "Serve the web pages, the HTTP API (/api/v1) and Prometheus metrics of a running server.",
            discussion: """
                The gateway is a client of the coordinator like any other: it asks the frontend \
                (--server, CURVE keys included) for each page and API answer, and follows the events \
                socket for live updates; it never opens the library file. `tactus serve` starts one \
                by default on 127.0.0.1:8080 (its --web and --no-web).

                Pages: / (the library, tempo search, histogram), /songs/SHA256 (a song's figure and \
                detectors), /compare, /playlist, /queue (live, with uploads). The HTTP API is \
                described by /api/v1/openapi.yaml; /metrics is in Prometheus' text format.

                Listening on anything but loopback requires --web-token-file (every request then \
                carries the token as 'Authorization: Bearer TOKEN', or the cookie of the /login form) \
                or --insecure.

                The gateway answers only the host names it is reached by on purpose (DNS \
                rebinding): its address, localhost on loopback, any IP address when listening on \
                every interface, and each --allowed-host (421 otherwise). A POST from a page of \
                another site is refused (403) unless it carries the token; requests from no \
                browser (no Origin, Referer or Sec-Fetch-Site) are taken. Uploads are spooled to \
                $TMPDIR as they arrive (--max-uploads at once, --max-upload-bytes-in-flight bytes \
                at once; 429 busy beyond), then sent to the coordinator in chunks.
                """)

        @OptionGroup var server: ServerOptions

        @Option(help: ArgumentHelp("The coordinator's events socket (default: the frontend's port + 2).", valueName: "endpoint"))
        var events: String?

        @Option(help: ArgumentHelp("Where to listen for HTTP: HOST:PORT (port 0: any free port).", valueName: "addr"))
        var listen = "127.0.0.1:8080"

        @Option(help: ArgumentHelp(
            "A file whose first line is the token every request must carry (bearer or login cookie).", valueName: "file"))
        var webTokenFile: String?

        @Flag(help: "Allow listening beyond loopback without a token.")
        var insecure = false

        @Option(help: ArgumentHelp(
            "A host name the gateway also answers (a reverse proxy's name that it passes on as Host); repeatable.", valueName: "name"))
        var allowedHost: [String] = []

        @Option(help: ArgumentHelp("The largest upload accepted, in bytes (too-large above it).", valueName: "bytes"))
        var maxUploadBytes = 256 << 20

        @Option(help: ArgumentHelp("How many uploads are received at once (busy beyond).", valueName: "count"))
        var maxUploads = 4

        @Option(help: ArgumentHelp(
            "How many bytes of uploads are held at once, spooled or on their way to the server (busy beyond).", valueName: "bytes"))
        var maxUploadBytesInFlight = 1 << 30

        @Option(help: ArgumentHelp(
            "How many HTTP connections are held at once (beyond, a newcomer takes the place of one without a request for 2 s or more, "
                + "else it is closed as it opens).", valueName: "count"))
        var maxConnections = 2048

        @Option(help: ArgumentHelp(
            "How many HTTP connections one address (an IPv4 address or an IPv6 /64) may hold at once.", valueName: "count"))
        var maxConnectionsPerAddress = 512

        @Option(help: .hidden)
        var announceFile: String?

        @Option(help: .hidden)
        var parentPid: Int32?

        @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        @Flag(help: "Print the listening address as one JSON object ({\"url\": ...}) when ready.")
        var json = false

        func validate() throws {
            if maxUploadBytes < 1 { throw ValidationError("--max-upload-bytes must be at least 1") }
            if maxUploads < 1 { throw ValidationError("--max-uploads must be at least 1") }
            if maxUploadBytesInFlight < 1 { throw ValidationError("--max-upload-bytes-in-flight must be at least 1") }
            if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
            if !(1...maxConnections).contains(maxConnectionsPerAddress) {
                throw ValidationError("--max-connections-per-address must be from 1 to --max-connections (\(maxConnections))")
            }
            if let problem = AllowedHosts.problem(withNames: allowedHost) { throw ValidationError("--allowed-host \(problem)") }
            if events == nil && CoordinatorEndpoints.events(forFrontend: server.endpoint) == nil {
                throw ValidationError("give --events: the events socket cannot be derived from --server \(server.endpoint)")
            }
        }

        func run() throws {
            let logger = CommandLogging.logger("tactus.web", level: logLevel)
            let address = try WebAddress(listen, option: "--listen")
            let token = try webTokenFile.map { file in
                do { return try WebConfiguration.readToken(file: file) } catch { throw CommandFailure("\(error)") }
            }
            try address.checkAccess(token: token != nil, insecure: insecure, option: "--listen")
            if !WebConfiguration.isLoopback(address.host) && token == nil {
                logger.warning("listening on \(address.host):\(address.port) without a token (--insecure): anyone who reaches it can submit")
            }
            let configuration = WebConfiguration(
                host: address.host, port: address.port, frontend: server.endpoint,
                events: events ?? CoordinatorEndpoints.events(forFrontend: server.endpoint)!, curve: try server.curve.keys(),
                token: token, allowedHosts: allowedHost, maxUploadBytes: maxUploadBytes, maxUploads: maxUploads,
                maxUploadBytesInFlight: maxUploadBytesInFlight, timeout: .milliseconds(Int64((max(server.timeout, 5) * 1000).rounded())),
                announceFile: announceFile, maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress)
            let gateway: WebGateway
            do {
                gateway = try WebGateway(configuration: configuration, logger: logger)
            } catch {
                throw CommandFailure("cannot start the web gateway: \(error)")
            }
            let parentWatch = try parentPid.map { parent in
                try ParentWatch(parent: parent) { [logger] in
                    logger.error("the tactus serve that started this gateway has exited; exiting", metadata: ["parent": "\(parent)"])
                    Foundation.exit(ExitCode.failure.rawValue)
                }
            }
            let printJSON = json
            let failure = WebRunFailure()
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    try await gateway.run { url in
                        if printJSON {
                            print("{\"url\":\"\(url)\"}")
                        } else {
                            print("tactus web: \(url)  (pages, /api/v1, /metrics; stop with Ctrl-C)")
                        }
                        fflush(nil)
                    }
                } catch {
                    failure.set("\(error)")
                }
                done.signal()
            }
            done.wait()
            withExtendedLifetime(parentWatch) {}
            if let message = failure.message {
                throw CommandFailure("the web gateway on \(listen) stopped: \(message)")
            }
        }
    }
}

/// The error that ended the gateway's task, read by the waiting thread.
final class WebRunFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: String?

    func set(_ message: String) { lock.withLock { stored = message } }
    var message: String? { lock.withLock { stored } }
}
