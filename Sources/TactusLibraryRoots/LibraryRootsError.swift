import TactusModel

/// Why a path below the library roots could not be opened, walked or read: the path as it was
/// named and what is wrong with it. Its ``code`` is the code of the error a client is answered
/// with (`ErrorBody(error)`), its description the message, which names the path.
public struct LibraryRootsError: CodedError, Sendable, Hashable {
    /// What is wrong with the path.
    public enum Problem: Sendable, Hashable {
        /// The server has no library roots, so no file can be named by its path.
        case noRoots
        /// The path lies below none of the roots.
        case outsideRoots
        /// The path has a `..` below its root.
        case parentDirectory
        /// `root` is not one of the library roots.
        case notARoot(root: String)
        /// The path names nothing below its root (the root itself, or no name).
        case notBelowRoot
        /// The root cannot be opened, for `reason`.
        case rootUnavailable(root: String, reason: String)
        /// `component`, a name along the path, is a symbolic link: links below a root are not followed.
        case symbolicLink(component: String)
        /// No such file (or a name along the path is not a directory).
        case notFound
        /// `component`, a name along the path, cannot be opened or looked at, for `reason`.
        case cannotOpen(component: String, reason: String)
        /// The path names a directory, a FIFO, a device or a socket.
        case notRegularFile
        /// The file's bytes cannot be read, for `reason` (it shrank while it was read...).
        case cannotRead(reason: String)
        /// The file was not hashed before its deadline.
        case outOfTime
    }

    /// The path as it was named (the root and the path below it for a walk).
    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// `forbidden` for what the roots do not allow, `not-found`, `unreadable` for a file that
    /// cannot be opened or read, `unavailable` for a root that cannot be opened or a hash out of time.
    public var code: ErrorCode {
        switch problem {
        case .noRoots, .outsideRoots, .parentDirectory, .notARoot, .notBelowRoot, .symbolicLink: .forbidden
        case .notFound: .notFound
        case .cannotOpen, .notRegularFile, .cannotRead: .unreadable
        case .rootUnavailable, .outOfTime: .unavailable
        }
    }

    public var description: String {
        switch problem {
        case .noRoots: "\(path): submitting by server-side path is disabled (start the server with --library-root DIR)"
        case .outsideRoots: "\(path): outside the server's library roots"
        case .parentDirectory: "\(path): `..` is not allowed below a library root"
        case .notARoot(let root): "\(path): \(root) is not one of the library roots"
        case .notBelowRoot: "\(path): not a path below the library root"
        case .rootUnavailable(let root, let reason): "\(path): the library root \(root) cannot be opened (\(reason))"
        case .symbolicLink(let component):
            "\(path): \(component) is a symbolic link, and links below a library root are not followed"
        case .notFound: "\(path): no such file on the server"
        case .cannotOpen(let component, let reason): "\(path): cannot open \(component) (\(reason))"
        case .notRegularFile: "\(path): not a regular file"
        case .cannotRead(let reason): "\(path): cannot read the file (\(reason))"
        case .outOfTime: "\(path): not hashed (out of time)"
        }
    }
}
