import Foundation
import Testing
import TactusZMQ

@Suite struct CertificateTests {
    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "tactus-certificates-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func savedKeyPairsUseCZMQNamingFormatAndPermissions() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pair = try CurveKeyPair.generate()
        let files = try CurveCertificate(keyPair: pair).save(name: "alice", in: directory + "/keys")
        #expect(files.publicPath == directory + "/keys/alice.key")
        #expect(files.secretPath == directory + "/keys/alice.key_secret")

        let publicText = try String(contentsOfFile: files.publicPath, encoding: .utf8)
        let lines = publicText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("#   ****  Generated on ") && lines[0].hasSuffix("  ****"))
        #expect(lines.contains("#   ZeroMQ CURVE Public Certificate"))
        #expect(lines.contains("metadata") && lines.contains("curve"))
        #expect(lines.contains("    public-key = \"\(pair.publicKey.z85)\""))
        #expect(!publicText.contains("secret-key") && !publicText.contains(pair.secretKey.z85))

        let secretText = try String(contentsOfFile: files.secretPath, encoding: .utf8)
        #expect(secretText.contains("#   ZeroMQ CURVE **Secret** Certificate"))
        #expect(secretText.contains("    public-key = \"\(pair.publicKey.z85)\"\n    secret-key = \"\(pair.secretKey.z85)\"\n"))

        let secretMode = try #require(try FileManager.default.attributesOfItem(atPath: files.secretPath)[.posixPermissions] as? Int)
        #expect(secretMode == 0o600)
        let publicMode = try #require(try FileManager.default.attributesOfItem(atPath: files.publicPath)[.posixPermissions] as? Int)
        #expect(publicMode & 0o077 != 0o077 && publicMode & 0o400 != 0)

        // Round trip.
        #expect(try CurveCertificate(contentsOf: files.secretPath).keyPair == pair)
        let publicOnly = try CurveCertificate(contentsOf: files.publicPath)
        #expect(publicOnly.publicKey == pair.publicKey && publicOnly.secretKey == nil)
        #expect(throws: CertificateError.self) { _ = try publicOnly.keyPair }

        // Never overwritten: the existing pair stays.
        #expect(throws: CertificateError.self) { _ = try CurveCertificate(keyPair: CurveKeyPair.generate()).save(name: "alice", in: directory + "/keys") }
        #expect(try CurveCertificate(contentsOf: files.secretPath).keyPair == pair)
    }

    @Test func readingToleratesCommentsIndentationMetadataAndSingleQuotes() throws {
        let pair = try CurveKeyPair.generate()
        let text = """
            #   ****  Generated on 2015-02-16 01:23:56 by CZMQ  ****
            #   ZeroMQ CURVE **Secret** Certificate

            metadata
                name = "render farm"   # a comment after a value
            \temail = 'ops@example.org'
            curve
            \tpublic-key = "\(pair.publicKey.z85)"
                  secret-key = "\(pair.secretKey.z85)"
            """
        let certificate = try CurveCertificate(text: text)
        #expect(try certificate.keyPair == pair)
        #expect(certificate.metadata == ["name": "render farm", "email": "ops@example.org"])
        // What the certificate writes reads back the same.
        #expect(try CurveCertificate(text: certificate.secretText()!).keyPair == pair)
    }

    @Test func badCertificatesFailWithTheirReason() throws {
        let pair = try CurveCertificate(keyPair: CurveKeyPair.generate())
        let other = try CurveKeyPair.generate()
        let problems: [(String, String)] = [
            ("metadata\n", "no 'public-key'"),
            ("curve\n    public-key = \"tooshort\"\n", "not 40 characters"),
            ("curve\n    public-key = \"\(pair.publicKey.z85)\n", "unterminated"),
            ("curve\n    public-key = \"\(pair.publicKey.z85)\"\n    secret-key = \"\(other.secretKey.z85)\"\n", "does not belong"),
        ]
        for (text, problem) in problems {
            #expect { _ = try CurveCertificate(text: text) } throws: { "\($0)".contains(problem) }
        }
        #expect { _ = try CurveCertificate(contentsOf: "/nonexistent/x.key") } throws: { "\($0)".hasPrefix("/nonexistent/x.key: ") }
    }

    @Test func keysContainingTheCommentCharacterSurviveARoundTrip() throws {
        // Z85 keys often contain '#': find one that does and read it back.
        var pair = try CurveKeyPair.generate()
        while !(pair.publicKey.z85 + pair.secretKey.z85).contains("#") { pair = try CurveKeyPair.generate() }
        let certificate = CurveCertificate(keyPair: pair)
        #expect(try CurveCertificate(text: certificate.secretText()!).keyPair == pair)
        #expect(try CurveCertificate(text: certificate.publicText()).publicKey == pair.publicKey)
    }
}
