import Testing
@testable import TactusServiceHost

/// How soon a service host that failed is replaced: at once after one failure, then after a
/// pause that doubles with each failure of the last 10 s, never over a second.
@Suite struct RestartPacingTests {
    @Test func pausesDoubleWithRecentFailuresUpToASecond() {
        var pacing = ServiceHostPool.RestartPacing()
        let start = ContinuousClock.now
        #expect(pacing.wait(at: start) == .zero)
        pacing.failed(at: start)
        #expect(pacing.wait(at: start) == .zero)  // one failure: replaced at once
        pacing.failed(at: start)
        #expect(pacing.wait(at: start) == .milliseconds(50))
        #expect(pacing.wait(at: start + .milliseconds(20)) == .milliseconds(30))
        pacing.failed(at: start)
        #expect(pacing.wait(at: start) == .milliseconds(100))
        for _ in 0..<20 { pacing.failed(at: start) }
        #expect(pacing.wait(at: start) == .seconds(1))
        // Failures older than 10 s no longer count.
        #expect(pacing.wait(at: start + .seconds(11)) == .zero)
        pacing.failed(at: start + .seconds(11))
        #expect(pacing.failures.count == 1 && pacing.wait(at: start + .seconds(11)) == .zero)
    }
}
