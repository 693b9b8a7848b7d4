import Foundation
import TactusProtocol
import TactusZMQ

/// A test's stand-in for the coordinator's client side: a real ROUTER frontend and a real PUB
/// events socket on loopback ports, served on their own thread, speaking the real protocol.
/// `answer` decides the replies to each request and the events to publish after them.
public final class FakeFrontend {
    /// What the fake does with one request: the replies to send (in order) and events to
    /// publish afterwards (again and again for a while, since a new subscription takes a
    /// moment to reach a PUB socket).
    public struct Answer: Sendable {
        public var replies: [ClientReply]
        public var events: [Event] = []

        public init(replies: [ClientReply], events: [Event] = []) {
            self.replies = replies
            self.events = events
        }
    }

    /// The frontend's endpoint (ROUTER).
    public let frontend: String
    /// The events endpoint (PUB).
    public let events: String
    private let context: ZMQContext
    private let finished = DispatchSemaphore(value: 0)
    private let received = Locked<[ClientRequest]>([])

    /// Binds both sockets on free loopback ports and starts serving.
    public init(answer: @escaping @Sendable (ClientRequest) -> Answer) throws {
        let context = try ZMQContext(socketLinger: .zero)
        self.context = context
        let endpoints = Locked<(String, String)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let received = self.received
        let finished = self.finished
        let thread = Thread {
            defer { finished.signal() }
            do {
                let router = try context.socket(.router)
                let publisher = try context.socket(.pub)
                try router.bind("tcp://127.0.0.1:*")
                try publisher.bind("tcp://127.0.0.1:*")
                let bound = (try router.lastEndpoint, try publisher.lastEndpoint)
                endpoints.withLock { $0 = bound }
                ready.signal()
                var publishing: [(event: Event, until: ContinuousClock.Instant)] = []
                while true {
                    if let frames = try router.receive(timeout: .milliseconds(50)) {
                        let (envelope, message) = try ClientEnvelope.split(frames)
                        let request = try ClientRequest(frames: message)
                        received.withLock { $0.append(request) }
                        let answer = answer(request)
                        for reply in answer.replies { try router.send(envelope.wrap(try reply.frames())) }
                        publishing += answer.events.map { ($0, ContinuousClock.now + .seconds(2)) }
                    }
                    publishing.removeAll { $0.until < ContinuousClock.now }
                    for (event, _) in publishing { try publisher.send(try event.frames()) }
                }
            } catch {
                ready.signal()
            }
        }
        thread.start()
        ready.wait()
        guard let (frontend, events) = endpoints.withLock({ $0 }) else { throw FakeFrontendError.cannotBind }
        self.frontend = frontend
        self.events = events
    }

    /// The requests received so far.
    public var requests: [ClientRequest] { received.withLock { $0 } }

    /// Stops the thread and closes the sockets.
    public func stop() {
        context.shutdown()
        finished.wait()
    }
}

/// Why a ``FakeFrontend`` could not start.
public enum FakeFrontendError: Error {
    case cannotBind
}
