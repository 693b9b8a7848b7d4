import Synchronization
import TactusProtocol
import Testing

@testable import TactusWeb

/// The gateway makes a bounded number of exports at once: past it a request is `busy`, and
/// the places are given back when exports end, whether they succeed or fail.
@Suite struct ExportAdmissionTests {
    struct Failed: Error {}

    @Test func anExportPastTheLimitIsBusyUntilOneEnds() async throws {
        let admission = ExportAdmission(maxExports: 1)
        let (release, released) = AsyncStream<Void>.makeStream()
        let started = Mutex(false)
        let first = Task {
            try await admission.run { () async -> Int in
                started.withLock { $0 = true }
                for await _ in release { break }
                return 1
            }
        }
        while !started.withLock({ $0 }) { await Task.yield() }
        do {
            _ = try await admission.run { 2 }
            Issue.record("a second export at once was made")
        } catch let failure as HTTPFailure {
            #expect(failure.status == .tooManyRequests && failure.body.code == .busy)
            #expect(failure.body.retryAfterMs == ExportAdmission.retryAfterMs)
        }
        released.yield()
        #expect(try await first.value == 1)
        // A failed export gives its place back too.
        await #expect(throws: Failed.self) { try await admission.run { () async throws -> Int in throw Failed() } }
        #expect(try await admission.run { 3 } == 3)
    }
}
