import Foundation

/// Rewrites a file's bytes in place and puts its modification time back, to the nanosecond: a
/// change that a scan comparing sizes and modification times cannot see (the inode's change
/// time, which no owner can set, still moves). Tests use it to tell whether a scan read a file
/// again (it finds the new bytes) or trusted what it recorded.
public enum UnseenRewrite {
    /// Writes `bytes` over the file at `path` (of the same length, for the size to stay the
    /// same) and restores its access and modification times.
    public static func replace(_ path: String, with bytes: Data) throws {
        var before = stat()
        guard stat(path, &before) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        try bytes.write(to: URL(fileURLWithPath: path))
        var times = [before.st_atim, before.st_mtim]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
