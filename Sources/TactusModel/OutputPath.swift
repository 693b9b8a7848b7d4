import Foundation

/// What a command may write over: nothing, a regular file, or a symbolic link (which is
/// replaced, never followed). Never a directory, a device, a FIFO or a socket: an output is
/// written beside its path and renamed over it, so `--click /dev/null` run as root would turn
/// /dev/null into a regular file, and a FIFO another program reads would be swapped for a file.
public enum OutputPath {
    /// Why what is at `path` now (looked at without following a link) cannot be written over,
    /// or nil when it can.
    public static func refusal(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return refusal(status)
    }

    /// Why a file of `status` cannot be written over, or nil when it can.
    public static func refusal(_ status: stat) -> String? {
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFLNK: return nil
        case S_IFDIR: return "it is a directory"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFIFO: kind = "a FIFO (a named pipe)"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        return "it is \(kind): tactus writes only regular files, even with --force"
    }
}
