import Foundation
import TactusProtocol

/// The directories under which clients may name server-side files to submit.
///
/// A path must name, component by component, a file below one of the roots: the root is opened
/// (it is the operator's, so a symbolic link there is followed), then every component below it
/// is opened relative to the directory before it with `O_NOFOLLOW`, so a symbolic link or a
/// `..` anywhere below the root is refused, and a directory swapped for a link while the path
/// is being opened cannot lead outside. The song is then read only through the descriptor
/// opened here (``LibraryFile``), never by name again. With no roots, submitting by path is refused.
public struct LibraryRoots: Sendable {
    /// A root as configured and as resolved: a client may name a file through either.
    private struct Root: Sendable {
        var directory: String
        var prefixes: [[String]]
    }

    private let roots: [Root]

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

    /// The regular file `path` names below a root, open for reading; a `forbidden`,
    /// `not-found` or `unreadable` error naming `path` otherwise.
    public func open(_ path: String) throws(ErrorBody) -> LibraryFile {
        guard !roots.isEmpty else {
            throw ErrorBody(
                code: .forbidden, message: "submitting by server-side path is disabled (start the server with --library-root DIR)")
        }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let named = Self.components(absolute)
        guard let (root, below) = roots.lazy.compactMap({ root in
            root.prefixes.first { named.count > $0.count && Array(named.prefix($0.count)) == $0 }
                .map { (root, Array(named.dropFirst($0.count))) }
        }).first else {
            throw ErrorBody(code: .forbidden, message: "\(path): outside the server's library roots")
        }
        guard !below.contains("..") else {
            throw ErrorBody(code: .forbidden, message: "\(path): `..` is not allowed below a library root")
        }
        var directory = Glibc.open(root.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            throw ErrorBody(code: .unavailable, message: "\(path): the library root \(root.directory) cannot be opened (\(Self.reason()))")
        }
        for component in below.dropLast() {
            let next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = next < 0 ? Self.openError(path, directory, component, errno) : nil
            close(directory)
            if let failure { throw failure }
            directory = next
        }
        // O_NONBLOCK: a FIFO planted under the root must not block the intake thread on open.
        let file = openat(directory, below[below.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        let failure = file < 0 ? Self.openError(path, directory, below[below.count - 1], errno) : nil
        close(directory)
        if let failure { throw failure }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(file)
            throw ErrorBody(code: .unreadable, message: "\(path): not a regular file")
        }
        return LibraryFile(descriptor: file, size: Int(status.st_size), path: path)
    }

    /// The error for `component` of `directory` that could not be opened, by its `errno` (a
    /// symbolic link opened as a directory with `O_NOFOLLOW` fails with `ENOTDIR`, so the
    /// component itself is looked at, without following it).
    private static func openError(_ path: String, _ directory: Int32, _ component: String, _ failure: Int32) -> ErrorBody {
        var status = stat()
        let isLink = fstatat(directory, component, &status, AT_SYMLINK_NOFOLLOW) == 0 && status.st_mode & S_IFMT == S_IFLNK
        if isLink || failure == ELOOP {
            return ErrorBody(
                code: .forbidden, message: "\(path): \(component) is a symbolic link, and links below a library root are not followed")
        }
        return switch failure {
        case ENOENT, ENOTDIR:
            ErrorBody(code: .notFound, message: "\(path): no such file on the server")
        default:
            ErrorBody(code: .unreadable, message: "\(path): cannot open \(component) (\(String(cString: strerror(failure))))")
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }

    /// The names in `path`, without empty and `.` components (`..` is kept, to be refused).
    private static func components(_ path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }
}

/// A regular file below a library root, open for reading, with its size when opened. It is
/// closed when released.
public final class LibraryFile {
    /// The path as the client named it, for messages.
    public let path: String
    /// The size `fstat` gave for the open descriptor.
    public let size: Int
    private let descriptor: Int32

    fileprivate init(descriptor: Int32, size: Int, path: String) {
        self.descriptor = descriptor
        self.size = size
        self.path = path
    }

    deinit { close(descriptor) }

    /// The file's bytes, read through the open descriptor in chunks of at most `chunkBytes`
    /// into a buffer of the size `fstat` gave: a file that grows meanwhile is read no further,
    /// one that shrinks is an `unreadable` error.
    public func read(chunkBytes: Int = 1 << 20) throws(ErrorBody) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + offset, min(chunkBytes, size - offset), off_t(offset))
            }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else {
                let reason = count == 0 ? "the file shrank while it was read" : String(cString: strerror(errno))
                throw ErrorBody(code: .unreadable, message: "\(path): cannot read the file (\(reason))")
            }
            offset += count
        }
        return bytes
    }
}
