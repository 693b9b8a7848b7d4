import CZeroMQ

/// A CurveZMQ key (public or secret): 32 bytes, usually written as 40 Z85 characters.
///
/// A key never prints itself (it may be a secret key, and logs must not contain those):
/// ask for ``z85`` explicitly.
public struct CurveKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// A key from its 32 bytes; other lengths fail with ``ZMQError/invalidArgument``.
    public init(bytes: [UInt8]) throws(ZMQError) {
        guard bytes.count == 32 else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "a CURVE key is 32 bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A key from its 40-character Z85 text (as in CZMQ certificate files).
    public init(z85: String) throws(ZMQError) {
        guard z85.utf8.count == 40 else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "a Z85 CURVE key is 40 characters, not \(z85.utf8.count)")
        }
        try self.init(bytes: Z85.decode(z85))
    }

    /// The key as 40 Z85 characters.
    public var z85: String {
        // 32 bytes is a multiple of 4, so encoding cannot fail.
        (try? Z85.encode(bytes)) ?? ""
    }

    public var description: String { "CurveKey(redacted)" }
    public var debugDescription: String { description }
}

/// A CurveZMQ key pair.
public struct CurveKeyPair: Sendable, Hashable {
    public let publicKey: CurveKey
    public let secretKey: CurveKey

    public init(publicKey: CurveKey, secretKey: CurveKey) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The pair of `secretKey`, its public key derived from it (`zmq_curve_public`), as when
    /// loading a secret key file.
    public init(secretKey: CurveKey) throws(ZMQError) {
        var publicText = [CChar](repeating: 0, count: 41)
        let secretText = secretKey.z85
        if zmq_curve_public(&publicText, secretText) != 0 { throw ZMQError.last("zmq_curve_public") }
        let publicKey = try CurveKey(z85: publicText.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        self.init(publicKey: publicKey, secretKey: secretKey)
    }

    /// A new random key pair (`zmq_curve_keypair`). Fails with ``ZMQError/notSupported`` when
    /// libzmq was built without CURVE.
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        if zmq_curve_keypair(&publicText, &secretText) != 0 { throw ZMQError.last("zmq_curve_keypair") }
        let text = { (buffer: [CChar]) in buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
        return try CurveKeyPair(publicKey: CurveKey(z85: text(publicText)), secretKey: CurveKey(z85: text(secretText)))
    }
}

/// Z85, ZeroMQ's printable encoding of binary data (RFC 32/Z85): 4 bytes become 5 characters.
public enum Z85 {
    /// Encodes `bytes`, whose count must be a multiple of 4.
    public static func encode(_ bytes: [UInt8]) throws(ZMQError) -> String {
        guard bytes.count % 4 == 0 else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "Z85 encodes a multiple of 4 bytes, not \(bytes.count)")
        }
        var text = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        guard zmq_z85_encode(&text, bytes, bytes.count) != nil else { throw ZMQError.last("zmq_z85_encode") }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Decodes `text`, whose length must be a multiple of 5 characters of the Z85 alphabet.
    public static func decode(_ text: String) throws(ZMQError) -> [UInt8] {
        let count = text.utf8.count
        let invalid = ZMQError(code: ZMQError.invalidArgument, operation: "not Z85 text of a multiple of 5 characters")
        guard count % 5 == 0 else { throw invalid }
        var bytes = [UInt8](repeating: 0, count: count / 5 * 4)
        // Checked here so that the failure is the same whatever the libzmq version.
        guard text.utf8.allSatisfy({ z85Alphabet.contains($0) }) else { throw invalid }
        guard zmq_z85_decode(&bytes, text) != nil else { throw invalid }
        return bytes
    }

    private static let z85Alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)
}

/// What a CURVE client socket needs: the server's public key and its own key pair.
///
/// ```swift
/// let curve = try CurveClientKeys(serverKeyFile: "server.key", secretKeyFile: "alice.key_secret")
/// try socket.set(curve.socketOptions)   // before connect
/// ```
public struct CurveClientKeys: Sendable, Hashable {
    /// The server's long-term public key.
    public var serverKey: CurveKey
    /// The client's own key pair, whose public key the server must have authorized.
    public var keyPair: CurveKeyPair

    public init(serverKey: CurveKey, keyPair: CurveKeyPair) {
        self.serverKey = serverKey
        self.keyPair = keyPair
    }

    /// The keys from certificate files: the server's public certificate (`server.key`) and
    /// the client's secret certificate (`NAME.key_secret`).
    public init(serverKeyFile: String, secretKeyFile: String) throws(CertificateError) {
        serverKey = try CurveCertificate(contentsOf: serverKeyFile).publicKey
        do throws(CertificateError) {
            keyPair = try CurveCertificate(contentsOf: secretKeyFile).keyPair
        } catch {
            throw CertificateError(path: secretKeyFile, problem: "not a secret certificate (\(error.problem))")
        }
    }

    /// The options making a socket a CURVE client of the server; set them before connecting.
    public var socketOptions: [SocketOption] {
        [.curveServerKey(serverKey), .curvePublicKey(keyPair.publicKey), .curveSecretKey(keyPair.secretKey)]
    }
}

/// What a CURVE server socket needs: its key pair and the ZAP domain its connections are
/// authenticated in.
public struct CurveServerKeys: Sendable, Hashable {
    public var keyPair: CurveKeyPair
    /// The ``SocketOption/zapDomain(_:)`` of the server's sockets.
    public var zapDomain: String

    public init(keyPair: CurveKeyPair, zapDomain: String) {
        self.keyPair = keyPair
        self.zapDomain = zapDomain
    }

    /// The options making a socket a CURVE server; set them before binding.
    public var socketOptions: [SocketOption] {
        [.curveServer(true), .curveSecretKey(keyPair.secretKey), .zapDomain(zapDomain)]
    }
}
