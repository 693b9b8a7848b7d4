import Foundation

/// Runs `action` every `interval` seconds on a thread of its own until ``stop()``.
final class PeriodicTask: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let stopRequest = DispatchSemaphore(value: 0)

    init(name: String, interval: TimeInterval, action: @escaping @Sendable () -> Void) {
        let thread = Thread { [done, stopRequest] in
            // Each wait that times out is one period; a stop request ends the waits.
            while stopRequest.wait(timeout: .now() + interval) == .timedOut {
                action()
            }
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the thread and waits for its last run to end.
    func stop() {
        stopRequest.signal()
        done.wait()
    }
}
