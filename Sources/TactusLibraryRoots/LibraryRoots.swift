import Foundation
import TactusModel

/// The directories under which a server analyses files in place, and under which clients may
/// name server-side files to submit. The coordinator opens songs through it, and so do the
/// workers that share its host and roots.
///
/// A path must name, component by component, a file below one of the roots: the root is opened
/// along the path it resolved to when this value was made (`realpath`: the operator's links are
/// followed once, then), then every component below it is opened relative to the directory
/// before it with `O_NOFOLLOW`, so a symbolic link or a `..` anywhere below the root is refused,
/// and a directory swapped for a link while the path is being opened cannot lead outside. The
/// song is then read only through the descriptor opened here (``LibraryFile``), never by name
/// again. With no roots, submitting by path is refused.
///
/// A long-lived process (the coordinator, a worker) makes one value at start and keeps it: a
/// root, or a folder above it, replaced by a symbolic link afterwards is then refused rather
/// than followed, and the server keeps reading the directories the operator configured.
public struct LibraryRoots: Sendable {
    /// A root as configured and as resolved: a client may name a file through either.
    private struct Root: Sendable {
        var directory: String
        var prefixes: [[String]]
    }

    private let roots: [Root]

    /// The roots as resolved (`realpath`), absolute: what locations are recorded against and
    /// what a worker declares in READY.
    public var directories: [String] { roots.map(\.directory) }

    public var isEmpty: Bool { roots.isEmpty }

    public init(_ roots: [String]) {
        self.roots = roots.map { root in
            let resolved = realpath(root, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            }
            let prefixes = [root, resolved].compactMap { $0 }.map(Self.components)
            return Root(directory: resolved ?? root, prefixes: prefixes)
        }
    }

    /// Two of `roots` (as given) of which the first is the second (`same`), or lies inside it
    /// (compared resolved), or nil: the files of a root inside another would be walked, counted
    /// and recorded twice, under both, and a scan of one of them would not see the changes
    /// recorded under the other (attack round 8, L6).
    public static func nested(_ roots: [String]) -> (inner: String, outer: String, same: Bool)? {
        let resolved = roots.map { root in
            realpath(root, nil).map { pointer in
                defer { free(pointer) }
                return components(String(cString: pointer))
            } ?? components(root)
        }
        for (index, inner) in resolved.enumerated() {
            for (other, outer) in resolved.enumerated() where other != index && inner.count >= outer.count {
                guard Array(inner.prefix(outer.count)) == outer, inner.count > outer.count || other < index else { continue }
                return (roots[index], roots[other], inner.count == outer.count)
            }
        }
        return nil
    }

    /// The root (as resolved) and the relative path below it that `path` names, without
    /// opening anything; a `forbidden` error when `path` is outside the roots or has `..`.
    public func locate(_ path: String) throws(LibraryRootsError) -> (root: String, relative: String) {
        guard !roots.isEmpty else { throw LibraryRootsError(path: path, problem: .noRoots) }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let named = Self.components(absolute)
        guard let (root, below) = roots.lazy.compactMap({ root in
            root.prefixes.first { named.count >= $0.count && Array(named.prefix($0.count)) == $0 }
                .map { (root, Array(named.dropFirst($0.count))) }
        }).first else {
            throw LibraryRootsError(path: path, problem: .outsideRoots)
        }
        guard !below.contains("..") else { throw LibraryRootsError(path: path, problem: .parentDirectory) }
        return (root.directory, below.joined(separator: "/"))
    }

    /// The regular file `path` names below a root, open for reading; a `forbidden`,
    /// `not-found` or `unreadable` error naming `path` otherwise.
    public func open(_ path: String) throws(LibraryRootsError) -> LibraryFile {
        try openEntry(path).file
    }

    /// The regular file at `relative` below the root `root` (one of ``directories``), open for
    /// reading: how a worker opens the file a JOB names by its location.
    public func open(root: String, relative: String, named: String? = nil) throws(LibraryRootsError) -> LibraryFile {
        try openEntry(root: root, relative: relative, named: named).file
    }

    /// The directory `path` names below a root (or a root itself), opened one component at a
    /// time from the root without following a symbolic link, as ``openEntry(_:)`` opens a file's
    /// folder: a directory whose path was swapped for a link to elsewhere is refused, not
    /// reached. The caller closes the descriptor.
    public func openDirectory(_ path: String) throws(LibraryRootsError) -> Int32 {
        let (root, relative) = try locate(path)
        var directory = try Self.openRoot(root, named: path)
        for component in relative.split(separator: "/").map(String.init) where component != "." {
            let next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = next < 0 ? Self.openError(path, directory, component, errno) : nil
            close(directory)
            if let failure { throw failure }
            directory = next
        }
        return directory
    }

    /// The regular file `path` names below a root, open for reading, with the folder that
    /// holds it open too: what a file rewritten in place (a tag written) is worked on through.
    public func openEntry(_ path: String) throws(LibraryRootsError) -> LibraryEntry {
        let (root, relative) = try locate(path)
        guard !relative.isEmpty else { throw LibraryRootsError(path: path, problem: .notRegularFile) }
        return try openEntry(root: root, relative: relative, named: path)
    }

    /// The regular file at `relative` below the root `root` (one of ``directories``), open for
    /// reading, with its folder, both opened as ``open(_:)`` describes.
    public func openEntry(root: String, relative: String, named: String? = nil) throws(LibraryRootsError) -> LibraryEntry {
        let name = named ?? relative
        guard roots.contains(where: { $0.directory == root }) else {
            throw LibraryRootsError(path: name, problem: .notARoot(root: root))
        }
        let below = relative.split(separator: "/").map(String.init).filter { $0 != "." }
        guard !below.isEmpty, !below.contains("..") else { throw LibraryRootsError(path: name, problem: .notBelowRoot) }
        var directory = try Self.openRoot(root, named: name)
        for component in below.dropLast() {
            let next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = next < 0 ? Self.openError(name, directory, component, errno) : nil
            close(directory)
            if let failure { throw failure }
            directory = next
        }
        let folder = OpenFolder(descriptor: directory)
        // O_NONBLOCK: a FIFO planted under the root must not block the intake thread on open.
        let file = openat(directory, below[below.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if file < 0 { throw Self.openError(name, directory, below[below.count - 1], errno) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(file)
            throw LibraryRootsError(path: name, problem: .notRegularFile)
        }
        let opened = LibraryFile(
            descriptor: file, size: Int(status.st_size), mtimeNs: FileStatus.mtimeNs(status), ctimeNs: FileStatus.ctimeNs(status),
            path: name, root: root,
            relative: below.joined(separator: "/"))
        return LibraryEntry(file: opened, folder: folder, name: below[below.count - 1])
    }

    /// The regular file `path` names, opened with its folder for a command of the operator's
    /// own (`tactus tags --db` on a file it names): the folder as the path names it (symbolic
    /// links in it followed, as for a root), the file itself without following a link.
    public static func openEntry(atPath path: String) throws(LibraryRootsError) -> LibraryEntry {
        let url = URL(fileURLWithPath: path)
        let folder = LibraryRoots([url.deletingLastPathComponent().path])
        return try folder.openEntry(root: folder.directories[0], relative: url.lastPathComponent, named: path)
    }

    /// The root directory `root` (as resolved), opened one component at a time from `/` without
    /// following a symbolic link: the links of the operator's path were resolved when the roots
    /// were made, so a link found now was put there since, and is refused. The folders above the
    /// root are opened with `O_PATH`, which needs only the right to pass through them, as opening
    /// the whole path at once does (`/home/alice` may be mode 0711). `named` is the path for the error.
    static func openRoot(_ root: String, named: String) throws(LibraryRootsError) -> Int32 {
        let names = components(root)
        var directory = Glibc.open(root.hasPrefix("/") ? "/" : ".", (names.isEmpty ? O_RDONLY : Self.openPathOnly) | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            throw LibraryRootsError(path: named, problem: .rootUnavailable(root: root, reason: Self.reason(errno)))
        }
        for (index, component) in names.enumerated() {
            let access = index == names.count - 1 ? O_RDONLY : Self.openPathOnly
            let next = openat(directory, component, access | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = errno
            if next < 0 {
                let reason = Self.isLink(directory, component, failure)
                    ? "\(component) is now a symbolic link; the server follows the links of a root only when it starts"
                    : Self.reason(failure)
                close(directory)
                throw LibraryRootsError(path: named, problem: .rootUnavailable(root: root, reason: reason))
            }
            close(directory)
            directory = next
        }
        return directory
    }

    /// Linux's `O_PATH` (`010000000` in `asm-generic/fcntl.h`, on every architecture Swift runs
    /// on), which the Glibc module does not export: a descriptor that locates a directory
    /// without the right to list it.
    static let openPathOnly: Int32 = 0o10000000

    /// The error for `component` of `directory` that could not be opened, by its `errno` (a
    /// symbolic link opened as a directory with `O_NOFOLLOW` fails with `ENOTDIR`, so the
    /// component itself is looked at, without following it).
    static func openError(_ path: String, _ directory: Int32, _ component: String, _ failure: Int32) -> LibraryRootsError {
        if isLink(directory, component, failure) { return LibraryRootsError(path: path, problem: .symbolicLink(component: component)) }
        return switch failure {
        case ENOENT, ENOTDIR: LibraryRootsError(path: path, problem: .notFound)
        default: LibraryRootsError(path: path, problem: .cannotOpen(component: component, reason: reason(failure)))
        }
    }

    /// Whether opening `component` of `directory` without following links failed (`failure`)
    /// because it is a symbolic link: `ELOOP`, or `ENOTDIR` for a link opened as a directory,
    /// so the component itself is looked at.
    private static func isLink(_ directory: Int32, _ component: String, _ failure: Int32) -> Bool {
        var status = stat()
        return failure == ELOOP
            || (fstatat(directory, component, &status, AT_SYMLINK_NOFOLLOW) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    }

    /// The system's text for the `errno` value `failure`.
    static func reason(_ failure: Int32) -> String { String(cString: strerror(failure)) }

    /// The names in `path`, without empty and `.` components (`..` is kept, to be refused).
    private static func components(_ path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }
}

/// A regular file below a library root, open for reading, with its size and modification
/// time when opened. It is closed when released.
public final class LibraryFile: @unchecked Sendable {
    /// The path as the client named it, for messages.
    public let path: String
    /// The library root (resolved) and the path below it.
    public let root: String
    public let relative: String
    /// The size `fstat` gave for the open descriptor.
    public let size: Int
    /// The modification time `fstat` gave, in nanoseconds since 1970.
    public let mtimeNs: Int64
    /// The inode's change time `fstat` gave, in nanoseconds since 1970.
    public let ctimeNs: Int64
    /// The open descriptor; valid as long as this object lives.
    public let descriptor: Int32

    fileprivate init(descriptor: Int32, size: Int, mtimeNs: Int64, ctimeNs: Int64, path: String, root: String, relative: String) {
        self.descriptor = descriptor
        self.size = size
        self.mtimeNs = mtimeNs
        self.ctimeNs = ctimeNs
        self.path = path
        self.root = root
        self.relative = relative
    }

    deinit { close(descriptor) }

    /// Where the file lies, as the library records it.
    public var location: SongLocation { SongLocation(root: root, path: relative, byteSize: size, mtimeNs: mtimeNs, ctimeNs: ctimeNs) }

    /// Calls `body` with the file's bytes in order, in pieces of at most `chunkBytes` read
    /// through the open descriptor (one buffer, reused): at most ``size`` bytes are read, and a
    /// file that shrinks meanwhile is an `unreadable` error.
    public func forEachChunk(
        chunkBytes: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) throws(LibraryRootsError) -> Void
    ) throws(LibraryRootsError) {
        var buffer = [UInt8](repeating: 0, count: max(1, min(chunkBytes, size)))
        var offset = 0
        while offset < size {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, min($0.count, size - offset), off_t(offset)) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else {
                let reason = count == 0 ? "the file shrank while it was read" : LibraryRoots.reason(errno)
                throw LibraryRootsError(path: path, problem: .cannotRead(reason: reason))
            }
            // `withUnsafeBytes` rethrows untyped errors: the body's error comes out as a result.
            try buffer.withUnsafeBytes { read in Result { () throws(LibraryRootsError) in try body(UnsafeRawBufferPointer(rebasing: read[0..<count])) } }
                .get()
            offset += count
        }
    }

    /// The SHA-256 of the file's bytes, read in bounded pieces; with a `deadline`, an
    /// `unavailable` error once it has passed (checked between pieces).
    public func songID(before deadline: ContinuousClock.Instant? = nil) throws(LibraryRootsError) -> SongID {
        var hasher = SongID.Hasher()
        try forEachChunk { piece throws(LibraryRootsError) in
            if let deadline, ContinuousClock.now >= deadline { throw LibraryRootsError(path: path, problem: .outOfTime) }
            hasher.update(piece)
        }
        return hasher.finalize()
    }

    /// The file's bytes, read through the open descriptor into a buffer of the size `fstat`
    /// gave: a file that grows meanwhile is read no further, one that shrinks is an
    /// `unreadable` error. For a worker that does not share the root (the bytes go in its JOB).
    public func read(chunkBytes: Int = 1 << 20) throws(LibraryRootsError) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(size)
        try forEachChunk(chunkBytes: chunkBytes) { bytes.append(contentsOf: $0) }
        return bytes
    }
}

/// Times from `stat`.
enum FileStatus {
    static func mtimeNs(_ status: stat) -> Int64 {
        Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }

    /// The inode's change time: set by the kernel on every write, `chmod`, rename or `utime`,
    /// and, unlike the modification time, not settable by the file's owner.
    static func ctimeNs(_ status: stat) -> Int64 {
        Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
    }
}
