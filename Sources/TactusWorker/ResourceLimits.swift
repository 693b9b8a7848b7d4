import Foundation

/// Limits a worker process puts on itself at start (`setrlimit`), so that a pathological
/// song costs one failed job rather than the machine: past its address-space limit an
/// allocation fails and the process ends (the Swift runtime aborts it, SIGABRT); the
/// coordinator sees the worker lost and retries or fails the job, and `tactus serve` starts
/// the worker again.
///
/// The limit is on address space (RLIMIT_AS), which counts memory reserved as well as memory
/// used. glibc reserves 64 MiB of address space for each thread that gets its own malloc
/// arena, which made an idle worker's size vary from 140 to 400 MiB with the threads' timing;
/// ``limitMemory(megabytes:)`` first restricts malloc to one arena, so the size of an idle
/// worker is steady (about 140 MiB in a debug build) and the limit measures what the job
/// needs: roughly 2.5 times the song's bytes (the JOB message and its copies) plus the decoder's
/// and detector's buffers. A worker runs one job at a time, so one arena costs it nothing.
public enum ResourceLimits {
    /// The smallest memory limit a worker accepts: below it the worker cannot even start its
    /// threads (each needs an 8 MiB stack), and a worker whose signal-handling thread cannot
    /// start does not stop on SIGTERM.
    public static let minimumMemoryMegabytes = 256

    /// Limits the process's address space (RLIMIT_AS) to `megabytes` MiB, soft and hard,
    /// after restricting malloc to a single arena (Linux).
    public static func limitMemory(megabytes: Int) throws(ResourceLimitError) {
        #if os(Linux)
        try useOneMallocArena()
        let resource = __rlimit_resource_t(RLIMIT_AS.rawValue)
        #else
        let resource = RLIMIT_AS
        #endif
        let bytes = rlim_t(megabytes) * 1024 * 1024
        var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
        guard setrlimit(resource, &limit) == 0 else {
            throw ResourceLimitError(message: "cannot limit memory to \(megabytes) MiB: \(String(cString: strerror(errno)))")
        }
    }

    #if os(Linux)
    /// `mallopt(M_ARENA_MAX, 1)`. glibc's `malloc.h` is not part of the Glibc module, so the
    /// function is looked up by name.
    private static func useOneMallocArena() throws(ResourceLimitError) {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let arenaMax: Int32 = -8  // M_ARENA_MAX
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt"),
            unsafeBitCast(symbol, to: Mallopt.self)(arenaMax, 1) == 1
        else {
            throw ResourceLimitError(message: "cannot keep malloc to one arena (mallopt) before limiting memory")
        }
    }
    #endif

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
