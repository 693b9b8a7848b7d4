import TactusProtocol
import TactusZMQ

/// A ROUTER on a free loopback port that accepts connections and never answers: a server
/// that has hung, for the tests of timeouts and retries.
public final class SilentServer {
    public let context: ZMQContext
    public let socket: ZMQSocket
    /// Where it listens (`tcp://127.0.0.1:PORT`).
    public let endpoint: String

    public init() throws {
        context = try ZMQContext(socketLinger: .zero)
        socket = try context.socket(.router)
        try socket.bind("tcp://127.0.0.1:*")
        endpoint = try socket.lastEndpoint
    }

    /// The requests that arrived (envelope removed), waiting a little for the last one.
    public func drain() throws -> [ClientRequest] {
        var requests: [ClientRequest] = []
        while let frames = try socket.receive(timeout: .milliseconds(200)) {
            requests.append(try ClientRequest(frames: ClientEnvelope.split(frames).message))
        }
        return requests
    }
}
