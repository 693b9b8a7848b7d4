import Testing
import TactusProtocol

@Suite("Timing") struct TimingTests {
    @Test func aPeerIsDeadAfterThreeSilentHeartbeatIntervals() {
        #expect(Liveness.heartbeatInterval == .milliseconds(2500))
        #expect(Liveness.expiry == .milliseconds(7500))
        #expect(Liveness.maxAttempts == 3)
    }

    @Test func reconnectionWaitsDoubleUpToTheMaximum() {
        let backoff = ReconnectBackoff()
        #expect((1...8).map { backoff.delay(afterFailures: $0) } == [1, 2, 4, 8, 16, 32, 32, 32].map { .seconds($0) })
        #expect(backoff.delay(afterFailures: 0) == .seconds(1))
        #expect(backoff.delay(afterFailures: .max) == .seconds(32))
        #expect(ReconnectBackoff(initial: .milliseconds(300), maximum: .seconds(1)).delay(afterFailures: 3) == .seconds(1))
    }
}
