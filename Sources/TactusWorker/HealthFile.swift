import Foundation

/// A file whose modification time says when a worker last heard from its coordinator: the
/// worker touches it at every message that arrives (a HEARTBEAT at least every 2.5 s while
/// connected) and removes it when it stops; a health check compares its age with a limit.
///
/// This is how a container runtime can tell a worker that does its job from one that runs
/// but is cut off from its coordinator, without speaking the protocol:
///
/// ```swift
/// // In the worker (WorkerConfiguration.healthFile does this):
/// try HealthFile(path: "/tmp/tactus-health").touch()
/// // In the health check (`tactus health --file /tmp/tactus-health --max-age 10`):
/// let healthy = try HealthFile(path: "/tmp/tactus-health").age().map { $0 <= 10 } ?? false
/// ```
public struct HealthFile: Sendable, Hashable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Sets the file's modification time to now, creating the file (empty, mode 0644) if it
    /// does not exist.
    public func touch() throws(HealthFileError) {
        if utimensat(AT_FDCWD, path, nil, 0) == 0 { return }
        guard errno == ENOENT else { throw error("cannot update its time") }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw error("cannot create it") }
        close(descriptor)
    }

    /// Removes the file, if it exists.
    public func remove() {
        unlink(path)
    }

    /// Seconds since the file was last touched (never negative); nil when it does not exist.
    public func age(now: Date = Date()) throws(HealthFileError) -> TimeInterval? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw error("cannot read its time")
        }
        #if os(Linux)
        let time = info.st_mtim
        #else
        let time = info.st_mtimespec
        #endif
        let modified = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        return max(0, now.timeIntervalSince1970 - modified)
    }

    private func error(_ problem: String) -> HealthFileError {
        HealthFileError(path: path, problem: "\(problem): \(String(cString: strerror(errno)))")
    }
}

/// A health file that could not be touched or read.
public struct HealthFileError: Error, Sendable, CustomStringConvertible {
    /// The health file's path.
    public let path: String
    /// What went wrong, with the system's reason.
    public let problem: String

    public var description: String { "health file \(path): \(problem)" }
}
