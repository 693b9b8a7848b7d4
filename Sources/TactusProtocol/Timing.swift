/// The protocol's timing rules (`protocol/SPEC.md`, section 4): heartbeats, liveness, the
/// worker's reconnection backoff and the attempts a job gets.
public enum Liveness {
    /// Each side sends at least one message per interval (HEARTBEAT when it has nothing else).
    public static let heartbeatInterval: Duration = .milliseconds(2500)
    /// Intervals of silence after which a peer is dead.
    public static let heartbeats = 3
    /// The silence after which a peer is dead: 7.5 s.
    public static var expiry: Duration { heartbeatInterval * heartbeats }
    /// Attempts a job gets before it fails for good with its last error.
    public static let maxAttempts = 3
}

/// How long a worker waits before reconnecting: 1 s after the first failure, doubling after
/// each consecutive failure, at most 32 s. A connection that the coordinator answered resets
/// the count.
public struct ReconnectBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(32)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after `failures` consecutive failures (1 for the first).
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(failures, 1) {
            guard delay < maximum else { break }
            delay *= 2
        }
        return min(delay, maximum)
    }
}
