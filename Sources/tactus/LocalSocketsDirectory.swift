import Foundation
import Logging
import TactusCoordinator

/// A directory only this user may enter (mode 0700, made with `mkdtemp(3)` under `$TMPDIR` or
/// `/tmp`), for the coordinator's Unix sockets (``CoordinatorConfiguration/localEndpointsDirectory``).
struct LocalSocketsDirectory {
    let path: String

    /// The sockets' file names.
    static let names = {
        let names = BoundEndpoints.LocalEndpoints.socketNames
        return [names.frontend, names.backend, names.events]
    }()

    /// A new directory, or nil (logged) when none can be made or its sockets' paths would not
    /// fit a Unix socket address (108 bytes): the local processes then connect over TCP. The
    /// directories of servers killed before they could remove theirs are removed first.
    init?(logger: Logger) {
        let base = (ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
        Self.removeAbandoned(in: base)
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast()) + Array("tactus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            logger.warning("cannot make a directory for the local sockets; local processes connect over TCP", metadata: ["in": "\(base)"])
            return nil
        }
        path = String(cString: made)
        guard path.utf8.count + 1 + (Self.names.map(\.utf8.count).max() ?? 0) < 108 else {
            logger.warning("the local sockets' directory has too long a path; local processes connect over TCP", metadata: ["path": "\(path)"])
            rmdir(path)
            return nil
        }
    }

    /// Removes the sockets and the directory.
    func remove() {
        Self.remove(path)
    }

    private static func remove(_ path: String) {
        for name in names { unlink(path + "/" + name) }
        rmdir(path)
    }

    /// Removes the directories under `base` that a killed server left: named `tactus-` and six
    /// characters, this user's, mode 0700, holding nothing but the three sockets, and whose
    /// frontend no process listens on any more (a connection to it is refused).
    static func removeAbandoned(in base: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for entry in entries where entry.hasPrefix("tactus-") && entry.utf8.count == 13 {
            let path = (base as NSString).appendingPathComponent(entry)
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
                status.st_mode & 0o777 == 0o700,
                let contents = try? FileManager.default.contentsOfDirectory(atPath: path),
                Set(contents).isSubset(of: Set(names)), contents.contains(names[0]),
                !isListening(path + "/" + names[0])
            else { continue }
            remove(path)
        }
    }

    /// Whether a process accepts connections on the Unix socket at `path`.
    private static func isListening(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return true }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return true }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // Only a refused connection says no one listens; anything else (busy, no permission) keeps the directory.
        return connected == 0 || errno != ECONNREFUSED
    }
}
