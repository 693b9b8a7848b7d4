import TactusProtocol
import TactusZMQ

/// Who sent a request, as a service sees it.
public struct RequestOrigin: Sendable, Hashable {
    /// `key:` and the client's CURVE public key (Z85) on a secured server, else `connection:`
    /// and its connection's routing id in hex: what limits per client count by.
    public let client: String
    /// The sender's IP address (libzmq's `Peer-Address`), nil over a Unix socket.
    public let peerAddress: String?

    /// The client's address as a peer (``PeerAddress``: an IPv4 address or an IPv6 /64, or
    /// ``PeerAddress/local`` over a Unix socket): what shares of the server count by, since one
    /// peer may hold many connections. Worked out when asked, not for every request.
    public var peer: String { PeerAddress.group(of: peerAddress) }

    /// Who a share of a scarce resource (renders in hand) counts against: the client's key on a
    /// secured server, else its address beyond this machine; nil for a client of this machine
    /// without a key (over loopback or a Unix socket they are all one address, and share all).
    public var sharer: String? {
        if client.hasPrefix("key:") { return client }
        guard let peerAddress, !PeerAddress.isLoopback(peerAddress) else { return nil }
        return peer
    }
}

/// The coordinator's handler for each command it answers, by the command's name: what the loop
/// looks a request up in, once it is decoded. Each part of the coordinator registers the
/// commands it answers (``on(_:_:)``); the loop knows no command by name.
///
/// Handlers run on the loop's thread, given the loop, and answer there (at once, or later from
/// a background pool's completion).
struct RequestRoutes {
    /// Answers a request: with its response, or the error to send back.
    typealias Answer = (Result<ClientReply.Response, any Error>) -> Void
    typealias Handler = (CoordinatorLoop, ClientRequest.Body, RequestOrigin, @escaping Answer) -> Void

    private var handlers: [String: Handler] = [:]

    /// Routes `command` to `handle`, which gets the request typed and answers it once.
    mutating func on<C: ClientCommand>(
        _ command: C.Type, _ handle: @escaping (CoordinatorLoop, C.Request, RequestOrigin, @escaping Answer) -> Void
    ) {
        precondition(handlers[command.name] == nil, "two handlers for \(command.name)")
        handlers[command.name] = { loop, body, origin, answer in
            // The loop looks the handler up by the body's command, so the request is C's.
            handle(loop, body.request(command)!, origin, answer)
        }
    }

    /// The handler of the command named `name`, if one is registered.
    func handler(for name: String) -> Handler? { handlers[name] }

    /// The names of the commands routed.
    var commands: Set<String> { Set(handlers.keys) }
}

/// A part of the coordinator that answers some commands with state of its own (uploads, scans,
/// renders, recordings, tags): it registers a handler for each of its commands.
protocol RequestService {
    /// Registers a handler for each of its commands.
    func route(into routes: inout RequestRoutes)
}

/// A service the coordinator routes commands to beside its own: for commands added to its
/// table (``CoordinatorConfiguration/commands``) by an extension or a test. It answers on a
/// thread of the coordinator's service pool, never on the loop, so a slow answer delays no other
/// client; what it throws goes back as the error reply (an ``ErrorBody`` as it is, anything
/// else as `internal`).
///
/// ```swift
/// struct SongCount: CommandService {
///     let library: Library
///     func answer(_ request: EmptyBody, from origin: RequestOrigin) throws -> SongCountAnswer {
///         SongCountAnswer(songs: try library.songCount())
///     }
/// }
/// configuration.commands = .standard.adding(SongCountCommand.self)
/// configuration.services = [SongCount(library: ...)]   // one `CommandService` per command
/// ```
public protocol CommandService: Sendable {
    associatedtype Command: ClientCommand
    /// `request`'s answer (called on a service thread; may block, within reason).
    func answer(_ request: Command.Request, from origin: RequestOrigin) throws -> Command.Answer
}

extension CommandService {
    /// The name of the command it answers.
    var commandName: String { Command.name }

    /// Routes the service's command to the loop's service threads, which answer it there.
    func route(into routes: inout RequestRoutes) {
        routes.on(Command.self) { loop, request, origin, answer in
            let pool = loop.serviceWork
            guard pool.inFlight < CoordinatorLoop.maxBackgroundWork else { return answer(.failure(pool.busy)) }
            pool.run({ Result { ClientReply.Response(Command.self, try self.answer(request, from: origin)) } }, then: answer)
        }
    }
}
