/// Which "worker joined" and "worker lost" lines are written: at most ``burst`` in a
/// ``window``. Anyone who reaches the backend (without CURVE) can connect and leave without end,
/// 200 times a second, and would otherwise have the server write a line each time; past the
/// limit, joins and losses are counted, and ``summary(at:)`` gives the counts once the window
/// is over, for one line.
struct WorkerChurnLog {
    static let window: Duration = .seconds(10)
    static let burst = 40

    enum Event { case joined, lost }

    private var windowStart: ContinuousClock.Instant?
    private var written = 0
    private var unwritten = (joined: 0, lost: 0)

    /// Whether the line for `event` is written; if not, it is counted for the summary. A window
    /// whose lines were all written ends by itself; one with lines left out ends with its summary.
    mutating func allows(_ event: Event, at now: ContinuousClock.Instant = .now) -> Bool {
        if windowStart.map({ now - $0 >= Self.window && unwritten == (0, 0) }) ?? true {
            windowStart = now
            written = 0
        }
        written += 1
        guard written > Self.burst else { return true }
        switch event {
        case .joined: unwritten.joined += 1
        case .lost: unwritten.lost += 1
        }
        return false
    }

    /// The joins and losses not written during a window that is over, once (then a new window
    /// begins); nil while the window runs or when every line was written.
    mutating func summary(at now: ContinuousClock.Instant = .now) -> (joined: Int, lost: Int)? {
        guard let start = windowStart, now - start >= Self.window, unwritten != (0, 0) else { return nil }
        defer {
            unwritten = (0, 0)
            windowStart = now
            written = 0
        }
        return unwritten
    }
}
