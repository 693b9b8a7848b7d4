import Foundation
import TactusModel

/// The regular files below a directory of a library root, found without following symbolic
/// links: every directory is opened relative to its parent with `O_NOFOLLOW` and listed
/// through that descriptor, so a link swapped in while the tree is walked cannot lead outside
/// the root. Links, devices, FIFOs and sockets are reported as skipped, with the reason, and so
/// are names that are not UTF-8 (``FileName``), folders more than ``maxDepth`` deep and paths
/// longer than ``maxPathBytes``.
public struct LibraryWalk: Sendable {
    /// The deepest folder walked into, counted from the root (`Artist/Album/Disc` is 3): a
    /// library is never this deep, and every folder walked holds a descriptor until its tree
    /// is done.
    public static let maxDepth = 64
    /// The longest path below a root listed: the longest a JOB or an IDENTIFY can name (the
    /// protocol's `location.path`).
    public static let maxPathBytes = 4096

    /// A regular file found, by its path below the root, with what `fstatat` said of it.
    public struct Entry: Sendable, Hashable {
        public var relative: String
        public var size: Int
        public var mtimeNs: Int64
        /// The inode's change time (nanoseconds since 1970), which a file's owner cannot set back.
        public var ctimeNs: Int64
    }

    /// Something found that is not walked into or listed, and why.
    public struct Skipped: Sendable, Hashable, Codable {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    public var files: [Entry] = []
    /// The first ``maxListedSkips`` of what was skipped; ``skippedCount`` counts them all (a
    /// planted folder of a million links costs a count, not a list).
    public var skipped: [Skipped] = []
    public var skippedCount = 0
    /// The most skipped entries listed.
    public static let maxListedSkips = 1000

    /// Walks `relative` (a directory or a file; empty for the whole root) below `root`, one of
    /// `roots`' ``LibraryRoots/directories``. Names starting with `.` (hidden files, partial
    /// downloads) are left out silently.
    public init(roots: LibraryRoots, root: String, relative: String) throws(LibraryRootsError) {
        let path = relative.isEmpty ? root : "\(root)/\(relative)"
        guard roots.directories.contains(root) else { throw LibraryRootsError(path: path, problem: .notARoot(root: root)) }
        var directory = try LibraryRoots.openRoot(root, named: path)
        let names = relative.split(separator: "/").map(String.init)
        // Every directory on the way down to `relative`, refusing links.
        for (index, name) in names.enumerated() {
            var status = stat()
            guard fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                let failure = errno
                close(directory)
                throw LibraryRootsError(
                    path: path,
                    problem: failure == ENOENT ? .notFound : .cannotOpen(component: name, reason: LibraryRoots.reason(failure)))
            }
            if index == names.count - 1, status.st_mode & S_IFMT != S_IFDIR {
                // The path asked for is itself a file: listed, or skipped with its reason as in a folder.
                close(directory)
                classify(relative, status)
                return
            }
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = next < 0 ? LibraryRoots.openError(path, directory, name, errno) : nil
            close(directory)
            if let failure { throw failure }
            directory = next
        }
        walk(directory, prefix: names.joined(separator: "/"), depth: names.count)
        files.sort { $0.relative < $1.relative }
    }

    /// Counts `entry` as skipped, and lists it while fewer than ``maxListedSkips`` are.
    private mutating func skip(_ entry: Skipped) {
        skippedCount += 1
        if skipped.count < Self.maxListedSkips { skipped.append(entry) }
    }

    /// Lists what is not a directory: a regular file as found, anything else as skipped.
    private mutating func classify(_ path: String, _ status: stat) {
        if let tooLong = Self.tooLong(path) {
            skip(Skipped(path: path, reason: tooLong))
            return
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            files.append(
                Entry(relative: path, size: Int(status.st_size), mtimeNs: FileStatus.mtimeNs(status), ctimeNs: FileStatus.ctimeNs(status)))
        case S_IFLNK: skip(Skipped(path: path, reason: "a symbolic link (links below a library root are not followed)"))
        default: skip(Skipped(path: path, reason: "not a regular file"))
        }
    }

    /// Why `path` is not listed when it is longer than ``maxPathBytes``.
    private static func tooLong(_ path: String) -> String? {
        let bytes = path.utf8.count
        guard bytes > maxPathBytes else { return nil }
        return "a path of \(bytes) bytes below its root, longer than the \(maxPathBytes) tactus can name (shorten it)"
    }

    /// Lists `directory` (closing it), `depth` folders below the root, and everything below it.
    private mutating func walk(_ directory: Int32, prefix: String, depth: Int) {
        guard let stream = fdopendir(directory) else {
            skip(Skipped(path: prefix, reason: "cannot list the directory (\(LibraryRoots.reason(errno)))"))
            close(directory)
            return
        }
        defer { closedir(stream) }
        var subdirectories = [String]()
        while let entry = readdir(stream) {
            let bytes = FileName.bytes(of: entry)
            guard bytes.first != UInt8(ascii: ".") else { continue }
            guard let name = FileName.decoded(bytes) else {
                let shown = FileName.shown(bytes)
                skip(Skipped(path: prefix.isEmpty ? shown : prefix + "/" + shown, reason: FileName.notUTF8))
                continue
            }
            let path = prefix.isEmpty ? name : prefix + "/" + name
            var status = stat()
            guard fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                skip(Skipped(path: path, reason: "cannot stat (\(LibraryRoots.reason(errno)))"))
                continue
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                subdirectories.append(name)
            } else {
                classify(path, status)
            }
        }
        for name in subdirectories.sorted() {
            let path = prefix.isEmpty ? name : prefix + "/" + name
            if let tooLong = Self.tooLong(path) {
                skip(Skipped(path: path, reason: tooLong + ": the folder is not looked into"))
                continue
            }
            guard depth < Self.maxDepth else {
                skip(Skipped(path: path, reason: "more than \(Self.maxDepth) folders below its root: not looked into"))
                continue
            }
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                skip(Skipped(path: path, reason: "cannot open the directory (\(LibraryRoots.reason(errno)))"))
                continue
            }
            walk(next, prefix: path, depth: depth + 1)
        }
    }
}
