import Foundation
import Logging

/// Local worker processes started and supervised by `tactus serve`.
///
/// Each slot runs one `tactus worker` process. A process that exits for any reason is started
/// again after a delay that doubles with each quick failure (0.5 s up to 30 s) and resets
/// once a process has stayed up for a minute, so a worker that crashes on start does not
/// spin the machine. Each exit is reported to `onExit` as it happens (on a Foundation
/// thread), so the coordinator need not wait for the dead worker's silence to expire.
public final class LocalWorkerPool: @unchecked Sendable {
    /// What to run in one slot.
    public struct Slot: Sendable, Hashable {
        public var executable: String
        public var arguments: [String]
        /// A short name for logs (for example `comb-filter#2`).
        public var label: String

        public init(executable: String, arguments: [String], label: String) {
            self.executable = executable
            self.arguments = arguments
            self.label = label
        }
    }

    private struct SlotState {
        var process: Process?
        var startedAt: Date = .distantPast
        var backoff: TimeInterval = 0.5
        var restarts = 0
    }

    /// How a worker process ended.
    public struct Exit: Sendable, Hashable, CustomStringConvertible {
        public var label: String
        public var processID: Int32
        /// The exit status, or the signal number when ``killedBySignal``.
        public var status: Int32
        public var killedBySignal: Bool

        public init(label: String, processID: Int32, status: Int32, killedBySignal: Bool) {
            self.label = label
            self.processID = processID
            self.status = status
            self.killedBySignal = killedBySignal
        }

        /// `exited with status 1`, or `was killed by signal 6 (SIGABRT)`.
        public var description: String {
            guard killedBySignal else { return "exited with status \(status)" }
            let name = Self.signalNames[status].map { " (\($0))" } ?? ""
            return "was killed by signal \(status)\(name)"
        }

        private static let signalNames: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
            SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV",
            SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU",
        ]
    }

    private let slots: [Slot]
    private let logger: Logger
    private let onExit: @Sendable (Exit) -> Void
    private let onStart: @Sendable (Int32) -> Void
    private let lock = NSLock()
    private var states: [SlotState]
    private var stopping = false

    /// A pool of `slots`; `onExit` hears of every process that ends while the pool runs,
    /// `onStart` of every process started (its process id, before its exit can be heard of).
    public init(
        slots: [Slot], logger: Logger, onExit: @escaping @Sendable (Exit) -> Void = { _ in },
        onStart: @escaping @Sendable (Int32) -> Void = { _ in }
    ) {
        self.slots = slots
        self.logger = logger
        self.onStart = onStart
        self.onExit = onExit
        self.states = Array(repeating: SlotState(), count: slots.count)
    }

    /// Starts every slot's process.
    public func start() {
        for index in slots.indices {
            launch(index)
        }
    }

    /// How many times each slot has been restarted, by label.
    public var restartCounts: [String: Int] {
        lock.withLock { Dictionary(uniqueKeysWithValues: zip(slots.map(\.label), states.map(\.restarts))) }
    }

    /// The process identifiers of the running workers.
    public var processIdentifiers: [Int32] {
        lock.withLock { states.compactMap { $0.process?.isRunning == true ? $0.process?.processIdentifier : nil } }
    }

    /// Stops restarting, asks every worker to finish (SIGTERM), and kills those still running
    /// after `grace` seconds.
    public func stop(grace: TimeInterval) {
        let processes: [Process] = lock.withLock {
            stopping = true
            return states.compactMap(\.process)
        }
        for process in processes where process.isRunning {
            process.terminate()
        }
        let deadline = Date().addingTimeInterval(grace)
        while processes.contains(where: \.isRunning) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        for process in processes {
            process.waitUntilExit()
        }
    }

    private func launch(_ index: Int) {
        let slot = slots[index]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: slot.executable)
        process.arguments = slot.arguments
        // OpenBLAS (linked for the beatnet detector) starts a thread pool with its buffers when it
        // loads, one thread per core, in every worker. One thread: the detector asks for no more,
        // and the workers are the parallelism.
        var environment = ProcessInfo.processInfo.environment
        environment["OPENBLAS_NUM_THREADS"] = "1"
        process.environment = environment
        process.terminationHandler = { [weak self] finished in
            self?.exited(
                index,
                Exit(
                    label: slot.label, processID: finished.processIdentifier, status: finished.terminationStatus,
                    killedBySignal: finished.terminationReason == .uncaughtSignal))
        }
        lock.lock()
        defer { lock.unlock() }
        guard !stopping else { return }
        do {
            try process.run()
            // Under the lock, which the exit handler takes first: the start is heard before the exit.
            onStart(process.processIdentifier)
            states[index].process = process
            states[index].startedAt = Date()
            logger.debug("started worker", metadata: ["worker": "\(slot.label)", "pid": "\(process.processIdentifier)"])
        } catch {
            logger.error("cannot start worker", metadata: ["worker": "\(slot.label)", "error": "\(error)"])
            scheduleRestart(index)
        }
    }

    private func exited(_ index: Int, _ exit: Exit) {
        let reported: Bool = lock.withLock {
            guard !stopping else { return false }
            logger.warning(
                "worker exited; restarting",
                metadata: ["worker": "\(exit.label)", "pid": "\(exit.processID)", "exit": "\(exit)"])
            if Date().timeIntervalSince(states[index].startedAt) > 60 {
                states[index].backoff = 0.5
            }
            scheduleRestart(index)
            return true
        }
        if reported { onExit(exit) }
    }

    /// Called with the lock held.
    private func scheduleRestart(_ index: Int) {
        let delay = states[index].backoff
        states[index].backoff = min(delay * 2, 30)
        states[index].restarts += 1
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.launch(index)
        }
    }
}
