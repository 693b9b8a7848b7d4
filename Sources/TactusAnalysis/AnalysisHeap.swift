import Foundation

/// glibc's heap settings (`mallopt`), for the processes that tune them.
public enum MallocSetting: Int32, Sendable {
    case trimThreshold = -1
    case mmapThreshold = -3
    case arenaMax = -8

    /// Sets the setting for this process; false when glibc refused it, or on a system without
    /// `mallopt` (glibc's `malloc.h` is not part of the Glibc module, so the function is looked
    /// up by name).
    public func set(_ value: Int32) -> Bool {
        #if os(Linux)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return false }
        return unsafeBitCast(symbol, to: Mallopt.self)(rawValue, value) == 1
        #else
        return false
        #endif
    }
}

/// The C heap of a short-lived process that analyses songs: blocks under 32 MiB come from the
/// heap and freed memory stays there (up to 256 MiB) for the next block, rather than glibc's
/// default, which maps each block of 128 KiB or more afresh until it has seen one freed, and
/// hands freed memory back at once. Each fresh mapping is faulted in again, page by page, when
/// first written: about 270 page faults (a millisecond or two on a virtual machine) in one
/// analysis of a 3-minute song. The process's peak memory is the same, but memory freed is
/// kept until the process ends.
///
/// For `tactus analyze`, which ends after its files. Not for long-lived processes: a worker
/// would keep about 60 MiB more between songs, and the coordinator's memory must fall back
/// after a burst of uploads.
public enum AnalysisHeap {
    /// Applies the settings to this process.
    public static func configure() {
        _ = MallocSetting.mmapThreshold.set(32 << 20)
        _ = MallocSetting.trimThreshold.set(256 << 20)
    }
}
