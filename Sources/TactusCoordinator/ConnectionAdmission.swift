import Logging
import TactusZMQ

/// Who may connect to the coordinator's sockets: each peer, and all of them, within their
/// connections (``ConnectionLimits``), and with CURVE, the authorized keys of each role only
/// (the frontend and the events socket client keys, the backend worker keys), reloaded on
/// request, which its ZAP handler (RFC 27) admits during each connection's handshake. The loop
/// polls ``connectionEvents`` and ``socket``, and calls ``readConnectionEvents()`` and
/// ``answerRequests()`` when they are readable.
///
/// ```swift
/// let admission = try ConnectionAdmission(sockets: [(frontend, .client), (backend, .worker)], ...)  // before binding
/// if let zap = admission.socket, ready.contains(zap) { admission.answerRequests() }
/// ```
final class ConnectionAdmission {
    /// The REP socket libzmq sends ZAP requests to; nil without CURVE.
    let socket: ZMQSocket?
    private let limits: ConnectionLimits
    private let security: CoordinatorSecurity?
    /// The keys admitted for each role; nil without CURVE.
    private var authorizedKeys: [CoordinatorSecurity.Role: AuthorizedKeys]?
    private let logger: Logger

    /// How long a new connection may take to complete its handshake (a few round trips,
    /// CURVE's included) before libzmq drops it, so that connections that never complete one
    /// do not hold descriptors for libzmq's default 30 s.
    static let handshakeTimeout: Duration = .seconds(10)

    /// Starts counting the connections of `sockets`, and with `security` binds the handler and
    /// makes each socket a CURVE server of its role. Call it before the sockets bind: the
    /// handler must answer their first connection.
    init(
        sockets: [(ZMQSocket, CoordinatorSecurity.Role)], security: CoordinatorSecurity?, connectionsPerPeer: Int,
        workerConnections: Int, context: ZMQContext, logger: Logger
    ) throws {
        self.security = security
        self.logger = logger
        if security != nil {
            let handler = try context.socket(.rep)
            try handler.set(.linger(.zero))
            try handler.bind(ZAP.endpoint)
            socket = handler
        } else {
            socket = nil
        }
        limits = try ConnectionLimits(
            perPeer: connectionsPerPeer, workerConnections: workerConnections, sockets: sockets, context: context)
        for (server, role) in sockets {
            if let security { try server.set(security.serverKeys(for: role).socketOptions) }
            try server.set(.handshakeInterval(Self.handshakeTimeout))
        }
        authorizedKeys = try security?.loadAuthorizedKeys()
        logAuthorizedKeys(event: "authorized keys loaded")
    }

    /// Whether connections must come with an authorized CURVE key.
    var requiresKeys: Bool { security != nil }

    /// The sockets that become readable when connections are accepted or dropped.
    var connectionEvents: [ZMQSocket] { limits.eventSockets }

    /// Answers the waiting ZAP requests: a peer whose public key is authorized for the
    /// socket's role is admitted, with its key (Z85) as the user id of its messages, and
    /// anything else is refused.
    func answerRequests() {
        guard let socket else { return }
        for _ in 0..<256 {
            do {
                guard let frames = try socket.tryReceive(maxFrames: 16) else { return }
                try socket.send(reply(to: frames))
            } catch {
                logger.error("the ZAP handler failed", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    private func reply(to frames: [[UInt8]]) -> [[UInt8]] {
        guard let request = try? ZAPRequest(frames: frames) else {
            // A REP socket must answer before it can receive again.
            return [Array("1.0".utf8), frames.count > 1 ? frames[1] : [], Array("500".utf8), Array("bad ZAP request".utf8), [], []]
        }
        let role = CoordinatorSecurity.Role.allCases.first { $0.zapDomain == request.domain }
        if let key = request.curvePublicKey, let role, authorizedKeys?[role]?.admits(key) == true {
            return request.reply(.success, text: "OK", userID: key.z85)
        }
        logger.notice(
            "refused a connection: key not authorized",
            metadata: [
                "address": "\(request.address)", "mechanism": "\(request.mechanism)",
                "as": "\(role?.rawValue ?? request.domain)", "key": "\(request.curvePublicKey?.z85 ?? "none")",
            ])
        return request.reply(.authenticationFailure, text: "key not authorized")
    }

    /// Takes the waiting connection events into the counts, shutting down the connections
    /// past a limit.
    func readConnectionEvents() {
        limits.readEvents(logger: logger)
    }

    /// The connections dropped since the last call (a dropped connection may have held a
    /// large frame that never came whole).
    func takeDroppedConnections() -> Int {
        limits.takeDropped()
    }

    /// Reads the authorized keys directories again; on failure the keys loaded before stay.
    func reloadKeys() {
        guard let security else { return }
        do {
            authorizedKeys = try security.loadAuthorizedKeys()
            logAuthorizedKeys(event: "authorized keys reloaded")
        } catch {
            logger.error("cannot reload the authorized keys; keeping the previous ones", metadata: ["error": "\(error)"])
        }
    }

    private func logAuthorizedKeys(event: Logger.Message) {
        for (role, keys) in (authorizedKeys ?? [:]).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            logger.info(event, metadata: ["role": "\(role.rawValue)", "directory": "\(keys.directory)", "keys": "\(keys.keys.count)"])
            for problem in keys.problems {
                logger.warning("skipped an authorized key file", metadata: ["error": "\(problem)"])
            }
        }
    }
}

@available(*, unavailable)
extension ConnectionAdmission: Sendable {}
