import Foundation

/// Limits a worker process puts on itself at start (`setrlimit`), so that a pathological
/// song costs one failed job rather than the machine: past its address-space limit an
/// allocation fails and the process ends; the coordinator sees the worker lost and retries
/// or fails the job, and `tactus serve` starts the worker again.
public enum ResourceLimits {
    /// Limits the process's address space (RLIMIT_AS) to `megabytes` MiB, soft and hard.
    public static func limitMemory(megabytes: Int) throws {
        let bytes = rlim_t(megabytes) * 1024 * 1024
        var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_AS.rawValue)
        #else
        let resource = RLIMIT_AS
        #endif
        guard setrlimit(resource, &limit) == 0 else {
            throw ResourceLimitError(message: "cannot limit memory to \(megabytes) MiB: \(String(cString: strerror(errno)))")
        }
    }

    /// Lowers the process's CPU priority by `niceness` (1 to 19), so that the machine's
    /// interactive work (a coordinator answering clients) runs first. Linux sets the nice
    /// value per thread and new threads inherit it: call this before any thread is started.
    public static func lowerPriority(niceness: Int32) throws {
        #if os(Linux)
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        #else
        let which = PRIO_PROCESS
        #endif
        guard setpriority(which, 0, niceness) == 0 else {
            throw ResourceLimitError(message: "cannot lower the priority by \(niceness): \(String(cString: strerror(errno)))")
        }
    }
}

/// A resource limit that could not be applied.
public struct ResourceLimitError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
