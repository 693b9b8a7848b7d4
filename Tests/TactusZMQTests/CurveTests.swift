import Foundation
import TactusTestSupport
import TactusZMQ
import Testing

@Suite("CURVE and Z85") struct CurveTests {
    @Test func z85MatchesTheReferenceVectorAndRoundTrips() throws {
        // The test vector of ZeroMQ RFC 32.
        let data: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(try Z85.encode(data) == "HelloWorld")
        #expect(try Z85.decode("HelloWorld") == data)
        let all: [UInt8] = (0..<256).map(UInt8.init)
        #expect(try Z85.decode(Z85.encode(all)) == all)
    }

    @Test func z85RefusesBadLengthsAndCharacters() {
        #expect(throws: ZMQError.self) { try Z85.encode([1, 2, 3]) }
        #expect(throws: ZMQError.self) { try Z85.decode("Hell") }
        #expect(throws: ZMQError.self) { try Z85.decode("Hello Wor\u{7F}") }
        #expect(throws: ZMQError.self) { try Z85.decode("Hello\"orld") }
    }

    @Test func generatedKeyPairsAreDistinctAndTheirPublicKeyDerivesFromTheSecret() throws {
        #expect(ZMQLibrary.has("curve"))
        let first = try CurveKeyPair.generate()
        let second = try CurveKeyPair.generate()
        #expect(first.publicKey.bytes.count == 32 && first.secretKey.bytes.count == 32)
        #expect(first.publicKey.z85.count == 40)
        #expect(first != second)
        #expect(try CurveKeyPair(secretKey: first.secretKey) == first)
        #expect(try CurveKey(z85: first.publicKey.z85) == first.publicKey)
        for text in [String(describing: first), String(reflecting: first), "\(first.secretKey)"] {
            #expect(!text.contains(first.secretKey.z85.prefix(5)))
        }
        #expect(throws: ZMQError.self) { try CurveKey(bytes: [1, 2, 3]) }
        #expect(throws: ZMQError.self) { try CurveKey(z85: "HelloWorld") }
    }

    @Test func anEncryptedConnectionWorksWithTheRightServerKeyOnly() throws {
        let context = try ZMQContext(socketLinger: .zero)
        let serverKeys = try CurveKeyPair.generate()
        let server = try context.socket(.router)
        try server.set([.curveServer(true), .curveSecretKey(serverKeys.secretKey), .zapDomain("tactus")])
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint

        let clientKeys = try CurveKeyPair.generate()
        let client = try context.socket(.dealer)
        try client.set([
            .curveServerKey(serverKeys.publicKey), .curvePublicKey(clientKeys.publicKey),
            .curveSecretKey(clientKeys.secretKey), .routingID(bytes("trusted")),
        ])
        try client.connect(endpoint)
        try client.send([bytes("secret hello")])
        #expect(try server.receive(timeout: .seconds(3)) == [bytes("trusted"), bytes("secret hello")])
        try server.send([bytes("trusted"), bytes("secret reply")])
        #expect(try client.receive(timeout: .seconds(3)) == [bytes("secret reply")])

        // A client that expects another server key fails the handshake: nothing gets through.
        let impostorKeys = try CurveKeyPair.generate()
        let mistaken = try context.socket(.dealer)
        try mistaken.set([
            .curveServerKey(impostorKeys.publicKey), .curvePublicKey(clientKeys.publicKey),
            .curveSecretKey(clientKeys.secretKey), .routingID(bytes("mistaken")),
        ])
        try mistaken.connect(endpoint)
        try mistaken.send([bytes("should not arrive")])
        #expect(try server.receive(timeout: .milliseconds(700)) == nil)

        // A plain-text client does not get through either.
        let plain = try context.socket(.dealer)
        try plain.connect(endpoint)
        try plain.send([bytes("plain text")])
        #expect(try server.receive(timeout: .milliseconds(300)) == nil)
    }

    /// libzmq measures a CURVE frame with its box; the limit is of content all the same (the
    /// multi-host test's 1 MiB upload chunks were dropped by a 1 MiB frontend limit).
    @Test func aFrameOfExactlyTheMaximumSizeCrossesUnderCurveAndOneByteMoreDoesNot() throws {
        let context = try ZMQContext(socketLinger: .zero)
        let serverKeys = try CurveKeyPair.generate(), clientKeys = try CurveKeyPair.generate()
        let limit = 4096
        let server = try context.socket(.router)
        try server.set([.curveServer(true), .curveSecretKey(serverKeys.secretKey), .maxMessageSize(limit)])
        #expect(try server.maxMessageSize == limit)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint
        func client() throws -> ZMQSocket {
            let socket = try context.socket(.dealer)
            try socket.set([.curveServerKey(serverKeys.publicKey), .curvePublicKey(clientKeys.publicKey), .curveSecretKey(clientKeys.secretKey)])
            try socket.connect(endpoint)
            return socket
        }
        let atLimit = [UInt8](repeating: 1, count: limit)
        let fitting = try client()
        try fitting.send([atLimit])
        #expect(try server.receive(timeout: .seconds(3))?.last == atLimit)
        let oversized = try client()
        try oversized.send([[UInt8](repeating: 2, count: limit + 1)])
        #expect(try server.receive(timeout: .milliseconds(700)) == nil)
    }
}

@Suite("ZAP") struct ZAPTests {
    @Test func aZAPHandlerAdmitsOnlyAuthorizedClientKeys() throws {
        let context = try ZMQContext(socketLinger: .zero)
        let serverKeys = try CurveKeyPair.generate()
        let trusted = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let authorized: Set<CurveKey> = [trusted.publicKey]

        let seen = Locked<[ZAPRequest]>([])
        let stop = Locked(false)
        let ready = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            defer { stopped.signal() }
            do throws(ZMQError) {
                let handler = try context.socket(.rep)
                try handler.bind(ZAP.endpoint)
                ready.signal()
                while !stop.withLock({ $0 }) {
                    guard let frames = try handler.receive(timeout: .milliseconds(20)) else { continue }
                    let request = try ZAPRequest(frames: frames)
                    seen.withLock { $0.append(request) }
                    let admitted = request.curvePublicKey.map(authorized.contains) ?? false
                    try handler.send(request.reply(admitted ? .success : .authenticationFailure, text: admitted ? "OK" : "unknown key"))
                }
            } catch {
                Issue.record("ZAP handler: \(error)")
                ready.signal()
            }
        }.start()
        #expect(ready.wait(timeout: .now() + 5) == .success)
        defer {
            stop.withLock { $0 = true }
            _ = stopped.wait(timeout: .now() + 5)
        }

        let server = try context.socket(.router)
        try server.set([.curveServer(true), .curveSecretKey(serverKeys.secretKey), .zapDomain("tactus")])
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.lastEndpoint

        func client(_ keys: CurveKeyPair, _ name: String) throws -> ZMQSocket {
            let socket = try context.socket(.dealer)
            try socket.set([
                .curveServerKey(serverKeys.publicKey), .curvePublicKey(keys.publicKey), .curveSecretKey(keys.secretKey),
                .routingID(bytes(name)),
            ])
            try socket.connect(endpoint)
            return socket
        }
        let refused = try client(stranger, "stranger")
        try refused.send([bytes("let me in")])
        #expect(try server.receive(timeout: .milliseconds(700)) == nil)

        let admitted = try client(trusted, "trusted")
        try admitted.send([bytes("hello")])
        #expect(try server.receive(timeout: .seconds(3)) == [bytes("trusted"), bytes("hello")])

        let requests = seen.withLock { $0 }
        #expect(requests.allSatisfy { $0.domain == "tactus" && $0.mechanism == "CURVE" && $0.address == "127.0.0.1" })
        #expect(Set(requests.compactMap(\.curvePublicKey)) == [trusted.publicKey, stranger.publicKey])
        #expect(throws: ZMQError.self) { try ZAPRequest(frames: [bytes("2.0"), [], [], [], [], []]) }
    }
}
