import NIOCore
import TactusProtocol
import Testing

@testable import TactusWeb

/// One address beyond the gateway's machine holds at most half of the places for uploads:
/// four slow uploads from one address kept everyone else from uploading (attack round 5, M1).
/// This machine's clients, all on loopback, share every place.
@Suite struct UploadAdmissionTests {
    @Test func oneAddressHoldsAtMostHalfOfThePlaces() throws {
        let admission = UploadAdmission(maxUploads: 4, maxBytes: 1 << 30)
        let first = try admission.admit(declaredBytes: 100, name: "a.wav", client: "203.0.113.7")
        let second = try admission.admit(declaredBytes: 100, name: "b.wav", client: "203.0.113.7")
        let refused = #expect(throws: HTTPFailure.self) { try admission.admit(declaredBytes: 100, name: "c.wav", client: "203.0.113.7") }
        #expect(refused?.status == .tooManyRequests && refused?.body.code == .busy)
        #expect(refused?.body.message.contains("as many uploads as one address may at once (2)") == true, "\(String(describing: refused))")
        // Another address still has places, up to the gateway's own limit.
        let third = try admission.admit(declaredBytes: 100, name: "d.wav", client: "198.51.100.1")
        let fourth = try admission.admit(declaredBytes: nil, name: "e.wav", client: nil)
        let full = #expect(throws: HTTPFailure.self) { try admission.admit(declaredBytes: 100, name: "f.wav", client: "192.0.2.1") }
        #expect(full?.body.message.contains("as many uploads as it takes at once (4 uploads") == true)
        // A place given back is the address's again.
        first.end()
        first.end()
        let again = try admission.admit(declaredBytes: 100, name: "g.wav", client: "203.0.113.7")
        for pass in [second, third, fourth, again] { pass.end() }
    }

    @Test func thisMachinesClientsShareEveryPlace() throws {
        for address in ["127.0.0.1", "127.0.1.5", "::1"] {
            #expect(UploadAdmission.client(of: try SocketAddress(ipAddress: address, port: 4000)) == nil, "\(address)")
        }
        #expect(UploadAdmission.client(of: nil) == nil)
        #expect(UploadAdmission.client(of: try SocketAddress(ipAddress: "203.0.113.7", port: 4000)) == "203.0.113.7")
        let admission = UploadAdmission(maxUploads: 4, maxBytes: 1 << 30)
        let passes = try (0..<4).map { try admission.admit(declaredBytes: 10, name: "song-\($0).wav", client: nil) }
        for pass in passes { pass.end() }
    }
}
