import Foundation
import Logging
import TactusAnalysis
import TactusZMQ

/// Limits a worker process puts on itself, so that a pathological song costs one failed job
/// rather than the machine: past its memory limit an allocation fails and the process ends
/// (the Swift runtime aborts it, and so does the worker when ZeroMQ reports `ENOMEM`: SIGABRT);
/// the coordinator sees the worker lost and retries or fails the job, and `tactus serve`
/// starts the worker again.
///
/// The limit is on address space (RLIMIT_AS), which counts memory reserved as well as memory
/// used: the mapped executable and libraries (OpenBLAS alone maps tens of MiB), every thread's
/// stack, malloc's arenas. Those make up an idle worker, whose size depends on the build and the
/// libraries linked, not on the songs. So the limit a user gives is an allowance for jobs: the
/// worker sets RLIMIT_AS to its own size once it is ready (threads and sockets made) plus the
/// allowance. A job needs roughly 2.5 times its song's bytes (the JOB message and its copies)
/// plus the decoder's and detectors' buffers.
///
/// glibc reserves 64 MiB of address space for each thread that gets its own malloc arena, at
/// whatever time the threads happen to contend; ``useOneMallocArena()``, called before any
/// thread starts, keeps that out of the measure. A worker runs one job at a time, so one arena
/// costs it nothing.
public enum ResourceLimits {
    /// The smallest job allowance a worker accepts: less would not hold a short song's
    /// message and decoded samples.
    public static let minimumJobMegabytes = 64

    /// Restricts malloc to a single arena (`mallopt(M_ARENA_MAX, 1)`, Linux; nothing elsewhere).
    /// Call it before threads start.
    public static func useOneMallocArena() throws(ResourceLimitError) {
        #if os(Linux)
        guard MallocSetting.arenaMax.set(1) else {
            throw ResourceLimitError(message: "cannot keep malloc to one arena (mallopt) before limiting memory")
        }
        #endif
    }

    /// Limits the process's address space (RLIMIT_AS, soft and hard) to its present size plus
    /// `megabytes` MiB, and returns the limit in bytes.
    @discardableResult
    public static func limitMemory(toCurrentSizePlus megabytes: Int) throws(ResourceLimitError) -> UInt64 {
        let current = try addressSpaceSize()
        let bytes = current + UInt64(megabytes) * 1024 * 1024
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_AS.rawValue)
        #else
        let resource = RLIMIT_AS
        #endif
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        guard setrlimit(resource, &limit) == 0 else {
            throw ResourceLimitError(
                message: "cannot limit memory to \(bytes >> 20) MiB (\(megabytes) MiB for jobs): \(String(cString: strerror(errno)))")
        }
        return bytes
    }

    /// The process's address-space size in bytes (the first field of `/proc/self/statm`, in pages).
    public static func addressSpaceSize() throws(ResourceLimitError) -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let field = text.split(separator: " ").first, let pages = UInt64(field)
        else {
            throw ResourceLimitError(message: "cannot read this process's size from /proc/self/statm")
        }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Ends the process with SIGABRT when `error` is ZeroMQ's `ENOMEM`: out of memory under
    /// its limit, the worker ends as when the Swift runtime cannot allocate, rather than take
    /// the failure for a broken connection and try the same job again in the same state.
    public static func abortIfOutOfMemory(_ error: ZMQError, logger: Logger) {
        guard error.isOutOfMemory else { return }
        logger.critical("out of memory: \(error); ending")
        abort()
    }

    /// Sets the calling thread's nice value to `niceness` (1 to 19), so that the machine's
    /// interactive work (a coordinator answering clients) runs first. Linux keeps the nice
    /// value per thread (threads started later inherit it): the worker calls this on its
    /// analysis thread only, so that its heartbeats keep their priority.
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
