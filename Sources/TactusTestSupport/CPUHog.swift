import Foundation

/// Busy-loop processes (`sh -c 'while :; do :; done'`) that keep the machine's cores busy, for
/// the tests and benchmarks of a loaded machine; stopped (SIGKILL) by ``stop()`` or when released.
///
/// ```swift
/// let hog = try CPUHog(processes: 4 * ProcessInfo.processInfo.activeProcessorCount)
/// defer { hog.stop() }
/// ```
public final class CPUHog {
    private var processes: [Process] = []

    /// Starts `count` busy processes.
    public init(processes count: Int) throws {
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            try process.run()
            processes.append(process)
        }
    }

    /// How many busy processes run.
    public var count: Int { processes.count }

    /// Kills the busy processes and waits for them.
    public func stop() {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        processes = []
    }

    deinit { stop() }
}
