import Foundation
import Testing
import TactusZMQ

@Suite("Sockets") struct SocketTests {
    let context: ZMQContext

    init() throws {
        context = try ZMQContext(socketLinger: .zero)
    }

    @Test func routerAndDealerExchangeMultipartMessagesAddressedByRoutingID() throws {
        let endpoint = inprocEndpoint()
        let router = try context.socket(.router)
        try router.bind(endpoint)
        let first = try context.socket(.dealer)
        try first.set(.routingID(bytes("worker-1")))
        try first.connect(endpoint)
        let second = try context.socket(.dealer)
        try second.set(.routingID(bytes("worker-2")))
        try second.connect(endpoint)
        #expect(try first.routingID == bytes("worker-1"))

        try first.send([bytes("hello"), [], bytes("from one")])
        try second.send([bytes("hello from two")])
        var received: [[[UInt8]]] = []
        for _ in 0..<2 {
            received.append(try #require(try router.receive(timeout: .seconds(2))))
        }
        #expect(received.contains([bytes("worker-1"), bytes("hello"), [], bytes("from one")]))
        #expect(received.contains([bytes("worker-2"), bytes("hello from two")]))

        let binary: [UInt8] = (0...255).map(UInt8.init)
        try router.send([bytes("worker-2"), binary, []])
        try router.send([bytes("worker-1"), bytes("for one")])
        #expect(try second.receive(timeout: .seconds(2)) == [binary, []])
        #expect(try first.receive(timeout: .seconds(2)) == [bytes("for one")])
    }

    @Test func requestAndReplyOverTCPOnAnEphemeralPort() throws {
        let server = try context.socket(.rep)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint
        let port = try #require(Int(endpoint.split(separator: ":").last ?? ""))
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:") && port > 0)

        let client = try context.socket(.req)
        try client.connect(endpoint)
        #expect(try client.lastEndpoint == endpoint)
        try client.send([bytes("ping"), bytes("1")])
        // REQ enforces alternation: a second request before the reply is refused.
        #expect(throws: ZMQError.self) { try client.send([bytes("again")]) }
        do {
            try client.send([bytes("again")])
        } catch {
            #expect(error.code == ZMQError.invalidState)
            #expect(error.message.isEmpty == false)
        }
        // REP strips the envelope (the empty delimiter) and adds it back on the reply.
        #expect(try server.receive(timeout: .seconds(2)) == [bytes("ping"), bytes("1")])
        try server.send([bytes("pong")])
        #expect(try client.receive(timeout: .seconds(2)) == [bytes("pong")])
    }

    @Test func aRouterSeesTheEmptyDelimiterThatREQAdds() throws {
        let endpoint = inprocEndpoint()
        let router = try context.socket(.router)
        try router.bind(endpoint)
        let client = try context.socket(.req)
        try client.set(.routingID(bytes("req-client")))
        try client.connect(endpoint)
        try client.send([bytes("question")])
        let request = try #require(try router.receive(timeout: .seconds(2)))
        #expect(request == [bytes("req-client"), [], bytes("question")])
        try router.send([bytes("req-client"), [], bytes("answer")])
        #expect(try client.receive(timeout: .seconds(2)) == [bytes("answer")])
    }

    @Test func subscribersReceiveOnlyTopicsTheySubscribedToByPrefix() throws {
        let endpoint = inprocEndpoint()
        let publisher = try context.socket(.pub)
        try publisher.bind(endpoint)
        let subscriber = try context.socket(.sub)
        try subscriber.set(.subscribe(bytes("song-a")))
        try subscriber.connect(endpoint)

        // Subscriptions travel asynchronously: publish until the first one arrives.
        var received: [[[UInt8]]] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while received.isEmpty && ContinuousClock.now < deadline {
            try publisher.send([bytes("song-b"), bytes("not for us")])
            try publisher.send([bytes("song-a1"), bytes("prefix match")])
            if let message = try subscriber.receive(timeout: .milliseconds(20)) { received.append(message) }
        }
        try publisher.send([bytes("song-b"), bytes("not for us")])
        try publisher.send([bytes("song-a"), bytes("exact match")])
        while let message = try subscriber.receive(timeout: .milliseconds(200)) { received.append(message) }

        #expect(received.contains([bytes("song-a"), bytes("exact match")]))
        #expect(received.allSatisfy { $0[0].starts(with: bytes("song-a")) })
        #expect(received.contains { $0 == [bytes("song-a1"), bytes("prefix match")] })
    }

    @Test func timedAndNonBlockingReceivesReturnNilWhenNothingArrives() throws {
        let socket = try context.socket(.dealer)
        try socket.bind(inprocEndpoint())
        #expect(try socket.tryReceive() == nil)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try socket.receive(timeout: .milliseconds(150)) == nil)
        #expect(clock.now - start >= .milliseconds(140))
    }

    @Test func aMessageWithTooManyFramesIsDiscardedWholeAndReported() throws {
        let endpoint = inprocEndpoint()
        let router = try context.socket(.router)
        try router.bind(endpoint)
        let dealer = try context.socket(.dealer)
        try dealer.connect(endpoint)
        try dealer.send((0..<10).map { bytes("frame \($0)") })
        try dealer.send([bytes("after")])

        do {
            let message = try router.receive(timeout: .seconds(2), maxFrames: 4)
            Issue.record("a message passed a 4-frame limit: \(String(describing: message))")
        } catch {
            #expect(error.code == ZMQError.messageTooLarge)
            #expect(error.operation.contains("11 frames"))  // the routing id frame counts too
        }
        // The rest of the oversized message was drained: the next message is intact.
        let next = try #require(try router.receive(timeout: .seconds(2), maxFrames: 4))
        #expect(next.count == 2 && next[1] == bytes("after"))
    }

    @Test func aMessageWithTooManyFramesCanBeKeptInPartWithItsFrameCount() throws {
        let endpoint = inprocEndpoint()
        let router = try context.socket(.router)
        try router.bind(endpoint)
        let dealer = try context.socket(.dealer)
        try dealer.connect(endpoint)
        try dealer.send((0..<10).map { bytes("frame \($0)") })
        try dealer.send([bytes("after")])
        var received: ReceivedMessage?
        let deadline = ContinuousClock.now + .seconds(2)
        while received == nil && ContinuousClock.now < deadline {
            received = try router.tryReceive(keepingAtMost: 4)
        }
        let message = try #require(received)
        // The routing id, then the first three frames; the count includes the routing id.
        #expect(message.frameCount == 11 && message.userID == nil)
        let frames = message.frames
        #expect(frames.count == 4 && frames[1] == bytes("frame 0") && frames[3] == bytes("frame 2"))
        let next = try #require(try router.receive(timeout: .seconds(2), maxFrames: 4))
        #expect(next.count == 2 && next[1] == bytes("after"))
    }

    /// A message over what its sender may send (the limit asked of its first frame, the routing
    /// id) comes with its first frame alone and the bytes left uncopied; the next one whole.
    @Test func aMessageOverItsSendersLimitComesWithoutItsFrames() throws {
        let endpoint = inprocEndpoint()
        let router = try context.socket(.router)
        try router.bind(endpoint)
        let dealer = try context.socket(.dealer)
        try dealer.set(.routingID(bytes("small-only")))
        try dealer.connect(endpoint)
        try dealer.send([bytes("head"), [UInt8](repeating: 7, count: 100_000), bytes("tail")])
        try dealer.send([bytes("head"), [UInt8](repeating: 7, count: 100)])
        var received: ReceivedMessage?
        var limits: [[UInt8]] = []
        let deadline = ContinuousClock.now + .seconds(2)
        while received == nil && ContinuousClock.now < deadline {
            received = try router.tryReceive(keepingAtMost: 8) { first in
                limits.append(first)
                return 1_000
            }
        }
        let large = try #require(received)
        #expect(limits == [bytes("small-only")])
        #expect(large.frames == [bytes("small-only")] && large.frameCount == 4 && large.bytesLeftOut == 4 + 100_000 + 4)
        let small = try #require(try router.tryReceive(keepingAtMost: 8) { _ in 1_000 })
        #expect(small.frames.count == 3 && small.frames[2].count == 100 && small.bytesLeftOut == 0)
    }

    @Test func framesLargerThanTheMaximumMessageSizeAreRefused() throws {
        let router = try context.socket(.router)
        try router.set(.maxMessageSize(1024))
        #expect(try router.maxMessageSize == 1024)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint

        let large = try context.socket(.dealer)
        try large.connect(endpoint)
        try large.send([[UInt8](repeating: 7, count: 2000)])
        #expect(try router.receive(timeout: .milliseconds(500)) == nil)

        let small = try context.socket(.dealer)
        try small.connect(endpoint)
        try small.send([[UInt8](repeating: 7, count: 1000)])
        let message = try #require(try router.receive(timeout: .seconds(2)))
        #expect(message.last?.count == 1000)
    }

    @Test func aMandatoryRouterReportsUnknownPeers() throws {
        let router = try context.socket(.router)
        try router.set(.routerMandatory(true))
        try router.bind(inprocEndpoint())
        do {
            try router.send([bytes("nobody"), bytes("hello")])
            Issue.record("sending to an unknown routing id succeeded")
        } catch {
            #expect(error.code == ZMQError.hostUnreachable)
            #expect(error.description.contains("send"))
        }
    }

    @Test func endpointsCanBeUnboundAndRebound() throws {
        let server = try context.socket(.router)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint
        let other = try context.socket(.router)
        #expect(throws: ZMQError.self) { try other.bind(endpoint) }
        try server.unbind(endpoint)
        do {
            try server.unbind(endpoint)
            Issue.record("unbinding twice succeeded")
        } catch {
            #expect(error.code == ZMQError.noEntry)
        }
        // libzmq closes the listener in its I/O thread: the port comes free shortly after.
        var rebound = false
        let deadline = ContinuousClock.now.advanced(by: .seconds(2))
        while !rebound && ContinuousClock.now < deadline {
            do {
                try other.bind(endpoint)
                rebound = true
            } catch {
                #expect(error.code == ZMQError.addressInUse)
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        #expect(rebound)

        let client = try context.socket(.dealer)
        try client.connect(endpoint)
        try client.disconnect(endpoint)
        do {
            try client.disconnect(endpoint)
            Issue.record("disconnecting twice succeeded")
        } catch {
            #expect(error.code == ZMQError.noEntry)
        }
    }

    @Test func optionsAndEndpointsAreCheckedByLibzmq() throws {
        let socket = try context.socket(.dealer)
        try socket.set([
            .linger(.milliseconds(10)), .sendHighWaterMark(100), .receiveHighWaterMark(100),
            .heartbeatInterval(.milliseconds(2500)), .heartbeatTimeToLive(.seconds(10)),
            .heartbeatTimeout(.milliseconds(7500)), .reconnectInterval(.milliseconds(100)),
            .reconnectIntervalMax(.seconds(5)), .immediate(true),
        ])
        do {
            try socket.connect("nonsense://here")
            Issue.record("an invalid endpoint was accepted")
        } catch {
            #expect(error.operation == "connect nonsense://here")
        }
        #expect(throws: ZMQError.self) { try socket.set(.routingID([])) }
        #expect(throws: ZMQError.self) { try socket.set(.subscribe(bytes("a"))) }  // only SUB subscribes
    }

    @Test func aClosedSocketRefusesEveryOperation() throws {
        let socket = try context.socket(.pair)
        socket.close()
        socket.close()
        #expect(socket.isClosed)
        do {
            try socket.send([bytes("x")])
            Issue.record("a closed socket sent")
        } catch {
            #expect(error.code == ZMQError.notSocket)
        }
        #expect(throws: ZMQError.self) { try socket.bind(inprocEndpoint()) }
        #expect(throws: ZMQError.self) { try socket.tryReceive() }
    }
}

/// Which peers count as one for the coordinator's connection limits and the web gateway's
/// token count.
@Suite struct PeerAddressTests {
    @Test func anIPv4AddressIsItsOwnPeer() {
        #expect(PeerAddress.group(of: "192.0.2.7") == "192.0.2.7")
        #expect(PeerAddress.group(of: "::ffff:192.0.2.7") == "192.0.2.7", "mapped into IPv6, it is the same peer")
    }

    @Test func anIPv6AddressCountsAsItsSlash64() {
        let one = PeerAddress.group(of: "2001:db8:1:2::1")
        #expect(one == "20010db800010002::/64")
        #expect(PeerAddress.group(of: "2001:db8:1:2:ffff::9") == one)
        #expect(PeerAddress.group(of: "fe80::1%eth0") == PeerAddress.group(of: "fe80::2"), "the zone is not part of it")
        #expect(PeerAddress.group(of: "2001:db8:1:3::1") != one)
    }

    @Test func anythingElseIsLocal() {
        #expect(PeerAddress.group(of: "") == "local")
        #expect(PeerAddress.group(of: "not an address") == "local")
    }
}

/// IPv6 endpoints, which libzmq takes only on sockets that allow them.
@Suite struct IPv6EndpointTests {
    @Test func aRouterBoundToAnIPv6AddressIsReachedThere() throws {
        // /proc/net/if_inet6 lists the host's IPv6 addresses; ::1 is missing where IPv6 is off.
        let addresses = (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8)) ?? ""
        guard addresses.contains("00000000000000000000000000000001") else {
            print("skipped: this host has no IPv6 loopback address (::1)")
            return
        }
        let context = try ZMQContext(socketLinger: .zero)
        let router = try context.socket(.router)
        try router.bind("tcp://[::1]:*")
        let endpoint = try router.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://[::1]:"))
        let dealer = try context.socket(.dealer)
        try dealer.connect(endpoint)
        try dealer.send([Array("hello".utf8)])
        let received = try #require(try router.receive(timeout: .seconds(5)))
        #expect(received.last == Array("hello".utf8))
    }
}
