import Foundation
import Logging

/// Ends a local worker (or the web gateway) when the `tactus serve` that started it is gone, so that no worker
/// outlives its coordinator (after a `kill -9`, say) and joins the next one as a stray.
///
/// The parent is checked at start (a worker whose parent died before it ran exits at once)
/// and then every ``interval`` by `getppid()`: once the parent has died the worker is
/// reparented (to init or a subreaper). `PR_SET_PDEATHSIG` is not used: it fires when the
/// *thread* that forked the worker ends, and `tactus serve` restarts workers from dispatch
/// threads that end when idle, so it would kill healthy workers.
struct ParentWatch {
    /// How often the parent is checked.
    static let interval: DispatchTimeInterval = .milliseconds(500)

    private let timer: any DispatchSourceTimer

    /// Watches for the end of process `parent`, running `gone` once it has ended; throws
    /// ``CommandFailure`` when `parent` is already not this process's parent.
    init(parent: Int32, gone: @escaping @Sendable () -> Void) throws {
        guard getppid() == parent else {
            throw CommandFailure("the tactus serve (pid \(parent)) that started this process has exited; not starting")
        }
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval)
        timer.setEventHandler {
            if getppid() != parent { gone() }
        }
        timer.resume()
    }
}
