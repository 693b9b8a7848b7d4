import TactusModel
import TactusProtocol
import Testing
@testable import TactusCoordinator

/// How the library's errors reach clients: what a retry can cure says so.
@Suite struct ErrorMappingTests {
    /// A full disk under the library (a `truth` that cannot be stored, say) is `unavailable`
    /// with a retry hint, not `internal`.
    @Test func aFullLibraryDiskIsUnavailable() {
        let body = CoordinatorLoop.errorBody(.full(path: "/data/library.sqlite"))
        #expect(body.code == .unavailable)
        #expect(body.retryAfterMs != nil)
        #expect(body.message.contains("/data/library.sqlite") && body.message.contains("full"))
    }
}
