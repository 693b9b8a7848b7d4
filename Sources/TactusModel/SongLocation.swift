import Foundation

/// Where a song analysed in place lies: a file below one of the server's library roots, as a
/// scan or a submission by path last saw it.
public struct SongLocation: Sendable, Hashable, Codable {
    /// The library root, absolute (as the server resolved it).
    public var root: String
    /// The file's path below ``root``: `/`-separated names, never `.` or `..`.
    public var path: String
    /// The file's size in bytes when last seen.
    public var byteSize: Int
    /// The file's modification time when last seen, in nanoseconds since 1970.
    public var mtimeNs: Int64
    /// The inode's change time when last seen, in nanoseconds since 1970 (nil: not recorded).
    /// Unlike the modification time, no program can set it back: a file rewritten with its size
    /// and modification time kept (a tag editor told to keep the file's time) changes it. Not
    /// on the wire.
    public var ctimeNs: Int64? = nil
    /// True when a scan found the file gone.
    public var missing: Bool

    public init(root: String, path: String, byteSize: Int, mtimeNs: Int64, ctimeNs: Int64? = nil, missing: Bool = false) {
        self.root = root
        self.path = path
        self.byteSize = byteSize
        self.mtimeNs = mtimeNs
        self.ctimeNs = ctimeNs
        self.missing = missing
    }

    /// The file's absolute path: ``root`` and ``path`` joined.
    public var absolutePath: String { root.hasSuffix("/") ? root + path : root + "/" + path }

    enum CodingKeys: String, CodingKey {
        case root, path, missing
        case byteSize = "byte_size", mtimeNs = "mtime_ns"
    }
}
