import Foundation
import TactusProtocol

/// Waiting for something to happen (a worker to register, an event, a file, a process to end)
/// instead of sleeping for a time a loaded machine may exceed: the condition is checked every
/// `poll` until it holds, and a deadline turns a wait that never ends into an error naming what
/// was awaited.
///
/// ```swift
/// try Wait.until("the coordinator to have 2 workers") { try client.serverStatus().workers.count == 2 }
/// let busy = try Wait.value("a worker running a job") { try client.serverStatus().workers.first { $0.job != nil } }
/// ```
///
/// The description is evaluated only when the wait times out, so it can show the last state
/// seen: `Wait.until("2 workers (last seen: \(count))") { ... }` with `count` a variable the
/// condition sets.
public enum Wait {
    /// A wait whose deadline passed before what it awaited happened.
    public struct TimedOut: Error, CustomStringConvertible {
        /// What was awaited, in the words of the wait.
        public let awaited: String
        public let timeout: Duration

        public var description: String {
            "waited \(String(format: "%.1f", timeout.seconds)) s in vain for \(awaited)"
        }
    }

    /// Returns once `condition` holds, checking it at once and then every `poll`; throws
    /// ``TimedOut`` naming `awaited` when it still does not hold `timeout` after the start
    /// (checked one last time at the deadline), and what `condition` throws.
    public static func until(
        _ awaited: @autoclosure () -> String, timeout: Duration = .seconds(30), poll: Duration = .milliseconds(20),
        _ condition: () throws -> Bool
    ) throws {
        _ = try value(awaited(), timeout: timeout, poll: poll) { try condition() ? true : nil }
    }

    /// The first value `probe` returns that is not nil, asked at once and then every `poll`;
    /// throws ``TimedOut`` naming `awaited` when it returned only nil until `timeout` after
    /// the start, and what `probe` throws.
    public static func value<Value>(
        _ awaited: @autoclosure () -> String, timeout: Duration = .seconds(30), poll: Duration = .milliseconds(20),
        _ probe: () throws -> Value?
    ) throws -> Value {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let lastChance = clock.now >= deadline
            if let value = try probe() { return value }
            if lastChance { throw TimedOut(awaited: awaited(), timeout: timeout) }
            Thread.sleep(forTimeInterval: min(poll, max(deadline - clock.now, .zero)).seconds)
        }
    }
}
