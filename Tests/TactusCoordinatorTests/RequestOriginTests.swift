import TactusModel
import TactusProtocol
import Testing

@testable import TactusCoordinator

/// Whose share a request counts against: a client's key, else its address beyond this machine.
/// This machine's clients without keys are one address and share everything (attack round 5,
/// M4: one client's renders kept everyone else's `stretch` busy).
@Suite struct RequestOriginTests {
    @Test func aShareIsAKeyOrAnAddressBeyondThisMachine() {
        #expect(RequestOrigin(client: "key:abc", peerAddress: "127.0.0.1").sharer == "key:abc")
        #expect(RequestOrigin(client: "connection:0a", peerAddress: "203.0.113.9").sharer == "203.0.113.9")
        #expect(RequestOrigin(client: "connection:0b", peerAddress: "203.0.113.9").sharer == "203.0.113.9", "one address, many connections")
        for local in ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1", nil] {
            #expect(RequestOrigin(client: "connection:0c", peerAddress: local).sharer == nil, "\(String(describing: local))")
        }
    }
}

/// One client holds at most half of the renders in hand; this machine's clients share them all.
@Suite struct RenderShareTests {
    static func pending(_ id: String, sharer: String?) -> RenderBook.Entry {
        let status = RenderStatus(
            render: id, song: SongID(hashing: Array(id.utf8)), sourceBPM: 120, factor: 1, targetBPM: 126, tempoRatio: 1.05,
            state: .pending)
        return RenderBook.Entry(status: status, path: "/tmp/\(id).wav", sharer: sharer)
    }

    @Test func oneClientHoldsAtMostHalfOfTheRendersInHand() {
        var book = RenderBook()
        book.entries["a"] = Self.pending("a", sharer: "203.0.113.9")
        #expect(book.refusal(of: "203.0.113.9", maxRenders: 4) == nil)
        book.entries["b"] = Self.pending("b", sharer: "203.0.113.9")
        let refused = book.refusal(of: "203.0.113.9", maxRenders: 4)
        #expect(refused?.code == .busy && refused?.message.contains("the most one client may") == true)
        #expect(book.refusal(of: "198.51.100.4", maxRenders: 4) == nil, "another client still starts renders")
        #expect(book.refusal(of: nil, maxRenders: 4) == nil)
        book.entries["c"] = Self.pending("c", sharer: nil)
        book.entries["d"] = Self.pending("d", sharer: nil)
        #expect(book.refusal(of: nil, maxRenders: 4)?.message.contains("4 renders in hand, the most it takes") == true)
        // An ended render holds no place.
        book.finish("a", .failure(ErrorBody(code: .internal, message: "x")))
        #expect(book.refusal(of: "203.0.113.9", maxRenders: 4) == nil)
    }
}
