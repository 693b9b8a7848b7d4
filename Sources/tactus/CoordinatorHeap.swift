import TactusAnalysis

/// The C heap of `tactus serve`'s process, whose coordinator takes bursts of frames of up to
/// 1 MiB from many connections at once (libzmq's buffers, and their copies): every block of
/// 256 KiB or more is mapped on its own and handed back to the system when freed.
///
/// glibc's default raises that threshold to the size of each large block freed (up to 32 MiB),
/// after which such blocks come from malloc's arenas, whose freed memory stays with the process:
/// after 400 connections sent 1 MiB songs at once, the coordinator kept 335 MiB more than before
/// the burst, against 17 MiB with this setting (`Tests/Web/frontend_flood.py at-limit`).
enum CoordinatorHeap {
    /// The size from which blocks are mapped on their own.
    static let mappedBlockBytes: Int32 = 256 << 10

    /// Applies the setting to this process; call it before the coordinator's threads start.
    static func configure() {
        _ = MallocSetting.mmapThreshold.set(mappedBlockBytes)
    }
}
