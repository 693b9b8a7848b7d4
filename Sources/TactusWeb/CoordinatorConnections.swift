import Dispatch
import Foundation
import TactusClient
import TactusProtocol
import TactusZMQ

/// The gateway's connections to the coordinator's frontend: a few ``TactusClient``s, each
/// used by one request at a time on a thread of its own (a client's calls block), so that the
/// HTTP server's event loops never wait on ZeroMQ.
///
/// ```swift
/// let connections = try CoordinatorConnections(server: "tcp://127.0.0.1:5555", curve: nil)
/// let matches = try await connections.run { try $0.query(request) }
/// ```
public final class CoordinatorConnections: @unchecked Sendable {
    /// The coordinator's frontend.
    public let server: String
    /// The CURVE keys of every connection (and of the events subscriber), nil without CURVE.
    public let curve: CurveClientKeys?
    /// How long each request waits for its reply.
    public let timeout: Duration
    /// The context the connections (and the events subscriber) share.
    public let context: ZMQContext

    private let lock = NSLock()
    private var idle: [TactusClient] = []
    private let slots: DispatchSemaphore
    private let queue = DispatchQueue(label: "tactus.web.coordinator", attributes: .concurrent)

    /// At most `maximum` requests are in flight at once; the others wait their turn.
    public init(server: String, curve: CurveClientKeys?, timeout: Duration = .seconds(5), maximum: Int = 8) throws(ClientError) {
        self.server = server
        self.curve = curve
        self.timeout = timeout
        do throws(ZMQError) {
            context = try ZMQContext(socketLinger: .zero)
        } catch {
            throw .transport(error)
        }
        slots = DispatchSemaphore(value: max(maximum, 1))
    }

    /// Runs `body` with a connection of its own, off the caller's thread.
    public func run<T: Sendable>(_ body: @escaping @Sendable (TactusClient) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                slots.wait()
                defer { slots.signal() }
                do {
                    let client = try checkOut()
                    do {
                        let value = try body(client)
                        checkIn(client)
                        continuation.resume(returning: value)
                    } catch let error as ClientError {
                        // A connection whose request went unanswered may get its late reply: it is
                        // dropped by request id, but a fresh socket also starts a fresh handshake.
                        switch error {
                        case .noAnswer, .connectionRefused: break
                        default: checkIn(client)
                        }
                        continuation.resume(throwing: error)
                    } catch {
                        checkIn(client)
                        continuation.resume(throwing: error)
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private func checkOut() throws(ClientError) -> TactusClient {
        lock.lock()
        if let client = idle.popLast() {
            lock.unlock()
            return client
        }
        lock.unlock()
        return try TactusClient(server: server, timeout: timeout, retries: 1, context: context, curve: curve)
    }

    private func checkIn(_ client: TactusClient) {
        lock.lock()
        idle.append(client)
        lock.unlock()
    }
}
