import Foundation

/// A CURVE certificate in CZMQ's file format (`zcert_save`), which pyzmq's `zmq.auth` and
/// every CZMQ tool read and write.
///
/// A key pair is two files: `NAME.key`, the public certificate, safe to hand out, and
/// `NAME.key_secret`, which also holds the secret key and is readable by its owner only.
/// Both are ZPL text (ZeroMQ Property Language, RFC 4):
///
/// ```text
/// #   ****  Generated on 2026-11-21 06:00:00 by Tactus  ****
/// #   ZeroMQ CURVE **Secret** Certificate
/// #   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.
///
/// metadata
/// curve
///     public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
///     secret-key = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
/// ```
///
/// ```swift
/// let written = try CurveCertificate(keyPair: .generate()).save(name: "alice", in: "keys")
/// let server = try CurveCertificate(contentsOf: "keys/server.key")   // public only
/// let mine = try CurveCertificate(contentsOf: "keys/alice.key_secret").keyPair
/// ```
public struct CurveCertificate: Sendable, Hashable {
    /// The certificate's public key.
    public var publicKey: CurveKey
    /// The secret key; nil for a public certificate.
    public var secretKey: CurveKey?
    /// The `metadata` section's properties (CZMQ tools put names, e-mails... there).
    public var metadata: [String: String]

    /// A certificate of `keyPair` (public and secret).
    public init(keyPair: CurveKeyPair, metadata: [String: String] = [:]) {
        self.publicKey = keyPair.publicKey
        self.secretKey = keyPair.secretKey
        self.metadata = metadata
    }

    /// A public certificate.
    public init(publicKey: CurveKey, metadata: [String: String] = [:]) {
        self.publicKey = publicKey
        self.secretKey = nil
        self.metadata = metadata
    }

    /// The key pair of a secret certificate; fails for a public one.
    public var keyPair: CurveKeyPair {
        get throws(CertificateError) {
            guard let secretKey else { throw CertificateError(path: nil, problem: "a public certificate has no secret key") }
            return CurveKeyPair(publicKey: publicKey, secretKey: secretKey)
        }
    }

    // MARK: Reading

    /// Reads a certificate file (`NAME.key` or `NAME.key_secret`).
    public init(contentsOf path: String) throws(CertificateError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CertificateError(path: path, problem: "cannot read the file (\(Self.reason(error)))")
        }
        do throws(CertificateError) {
            try self.init(text: text)
        } catch {
            throw CertificateError(path: path, problem: error.problem)
        }
    }

    /// Reads a certificate from its ZPL text.
    public init(text: String) throws(CertificateError) {
        let properties = try ZPL.properties(of: text)
        guard let publicText = properties["curve/public-key"] else {
            throw CertificateError(path: nil, problem: "no 'public-key' in a 'curve' section")
        }
        do throws(ZMQError) {
            publicKey = try CurveKey(z85: publicText)
            secretKey = try properties["curve/secret-key"].map { (text) throws(ZMQError) in try CurveKey(z85: text) }
        } catch {
            throw CertificateError(path: nil, problem: "a key is not 40 characters of Z85 text")
        }
        if let secretKey {
            let derived: CurveKeyPair
            do throws(ZMQError) {
                derived = try CurveKeyPair(secretKey: secretKey)
            } catch {
                throw CertificateError(path: nil, problem: "cannot derive the public key: \(error)")
            }
            guard derived.publicKey == publicKey else {
                throw CertificateError(path: nil, problem: "the public key does not belong to the secret key")
            }
        }
        var metadata = [String: String]()
        for (path, value) in properties where path.hasPrefix("metadata/") {
            metadata[String(path.dropFirst("metadata/".count))] = value
        }
        self.metadata = metadata
    }

    // MARK: Writing

    /// The public certificate's text (`NAME.key`): never the secret key.
    public func publicText(generatedAt date: Date = Date()) -> String {
        Self.header(date, [
            "ZeroMQ CURVE Public Certificate",
            "Exchange securely, or use a secure mechanism to verify the contents",
            "of this file after exchange. Store public certificates in your home",
            "directory, in the .curve subdirectory.",
        ]) + body(includingSecret: false)
    }

    /// The secret certificate's text (`NAME.key_secret`); nil for a public certificate.
    public func secretText(generatedAt date: Date = Date()) -> String? {
        guard secretKey != nil else { return nil }
        return Self.header(date, [
            "ZeroMQ CURVE **Secret** Certificate",
            "DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.",
        ]) + body(includingSecret: true)
    }

    /// Where ``save(name:in:)`` wrote a certificate.
    public struct SavedFiles: Sendable, Hashable, Codable {
        /// `DIR/NAME.key`, mode 0644.
        public var publicPath: String
        /// `DIR/NAME.key_secret`, mode 0600.
        public var secretPath: String
    }

    /// Writes `NAME.key` and `NAME.key_secret` into `directory` (created if missing). The
    /// secret file is created with mode 0600 before anything is written to it. Existing files
    /// are never overwritten: that would lose a key others may have authorized.
    public func save(name: String, in directory: String) throws(CertificateError) -> SavedFiles {
        guard let secret = secretText() else {
            throw CertificateError(path: nil, problem: "a public certificate cannot be saved as a key pair")
        }
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw CertificateError(path: nil, problem: "'\(name)' is not a file name")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CertificateError(path: directory, problem: "cannot create the directory (\(Self.reason(error)))")
        }
        let base = (directory as NSString).appendingPathComponent(name)
        let files = SavedFiles(publicPath: base + ".key", secretPath: base + ".key_secret")
        try Self.createExclusive(files.secretPath, contents: secret, mode: 0o600)
        do throws(CertificateError) {
            try Self.createExclusive(files.publicPath, contents: publicText(), mode: 0o644)
        } catch {
            unlink(files.secretPath)
            throw error
        }
        return files
    }

    private func body(includingSecret: Bool) -> String {
        var text = "metadata\n"
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            text += "    \(name) = \"\(value)\"\n"
        }
        text += "curve\n    public-key = \"\(publicKey.z85)\"\n"
        if includingSecret, let secretKey { text += "    secret-key = \"\(secretKey.z85)\"\n" }
        return text
    }

    private static func header(_ date: Date, _ lines: [String]) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var text = "#   ****  Generated on \(formatter.string(from: date)) by Tactus  ****\n"
        for line in lines { text += "#   \(line)\n" }
        return text + "\n"
    }

    /// Creates `path` (failing if it exists) with `mode`, then writes `contents`.
    private static func createExclusive(_ path: String, contents: String, mode: mode_t) throws(CertificateError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw CertificateError(path: path, problem: "cannot create the file (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        // The umask may have removed bits from `mode`; it never adds any, so 0600 stays 0600.
        fchmod(descriptor, mode)
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            unlink(path)
            throw CertificateError(path: path, problem: "cannot write the file (\(String(cString: strerror(errno))))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }
}

/// A certificate file that cannot be read, parsed or written.
public struct CertificateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file concerned, when there is one.
    public var path: String?
    /// What is wrong with it.
    public var problem: String

    public init(path: String?, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { path.map { "\($0): \(problem)" } ?? problem }
}

/// Just enough of the ZeroMQ Property Language (RFC 4) to read certificates: sections are
/// names alone on a line, properties are `name = value` or `name = "value"` indented under
/// them; `#` starts a comment (outside quotes); blank lines are ignored. Indentation depth
/// beyond "indented or not" is not significant here, as certificates nest one level only.
enum ZPL {
    /// Every property as `section/name` (or `name` at the top level) to its value.
    static func properties(of text: String) throws(CertificateError) -> [String: String] {
        var properties = [String: String]()
        var section: String?
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = stripComment(String(rawLine))
            let content = line.trimmingCharacters(in: .whitespaces)
            guard !content.isEmpty else { continue }
            let indented = line.first == " " || line.first == "\t"
            guard let equals = content.firstIndex(of: "=") else {
                // A section (or a nested one, which certificates do not use: it is skipped).
                if !indented { section = content }
                continue
            }
            let name = content[..<equals].trimmingCharacters(in: .whitespaces)
            var value = content[content.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if let quote = value.first, quote == "\"" || quote == "'" {
                guard value.count >= 2, value.last == quote else {
                    throw CertificateError(path: nil, problem: "line \(index + 1): unterminated quoted value")
                }
                value = String(value.dropFirst().dropLast())
            }
            guard !name.isEmpty else { throw CertificateError(path: nil, problem: "line \(index + 1): a property without a name") }
            let key = indented ? (section.map { "\($0)/\(name)" } ?? name) : name
            if !indented { section = nil }
            properties[key] = value
        }
        return properties
    }

    /// The line without a `#` comment that is outside quotes.
    private static func stripComment(_ line: String) -> String {
        var quote: Character?
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" {
                return String(line[..<index])
            }
        }
        return line
    }
}
