import Foundation
import Synchronization
import TactusModel

/// The claim of one process to be a library's writer: an exclusive `flock` on the file
/// `LIBRARY.writer-lock` beside it, held while the ``Library`` that took it is open.
///
/// SQLite keeps two writers' transactions apart, but not their intentions: a `tactus prune
/// --db` could delete the blob of a song a running server has just accepted, and two scans
/// would queue the same songs twice. So the coordinator and the commands given `--db` that
/// write take this lock (``Library/Options/exclusiveWriter``), and the second to come is
/// refused with ``TactusModel/StoreError/inUse(path:)``. Readers never take it. The kernel
/// drops the lock when its process ends, however it ends, so no stale lock is left behind;
/// a writer that is done gives it up at once with ``release()``.
final class WriterLock: Sendable {
    /// The lock file of the library at `libraryPath`.
    static func path(of libraryPath: String) -> String { libraryPath + ".writer-lock" }

    /// The locked file's descriptor, -1 once released.
    private let descriptor: Mutex<Int32>

    /// Takes the lock of the library at `libraryPath`, without waiting.
    init(libraryPath: String) throws(StoreError) {
        let path = Self.path(of: libraryPath)
        // Never through a symbolic link: the lock file is ours, whoever can write the directory.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT {
                throw .cannotOpen(path: libraryPath, reason: "its folder \((libraryPath as NSString).deletingLastPathComponent) does not exist")
            }
            throw .cannotOpen(path: libraryPath, reason: "cannot open its lock file \(path): \(String(cString: strerror(error)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            close(descriptor)
            if error == EWOULDBLOCK { throw .inUse(path: libraryPath) }
            throw .cannotOpen(path: libraryPath, reason: "cannot lock \(path): \(String(cString: strerror(error)))")
        }
        self.descriptor = Mutex(descriptor)
    }

    /// Gives the lock up (closing its file drops the `flock`); later calls do nothing.
    func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            close(descriptor)
            descriptor = -1
        }
    }

    deinit {
        release()
    }
}
