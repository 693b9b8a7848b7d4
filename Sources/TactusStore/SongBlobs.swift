import Foundation
import TactusModel

#if canImport(Glibc)
import Glibc
#endif

/// A problem storing or reading song bytes.
public struct SongBlobError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The disk is full or over quota.
        case diskFull = "disk-full"
        /// Any other I/O failure.
        case io
        /// The blob is not there.
        case missing
    }

    public let code: Code
    public let path: String
    public let message: String

    public var description: String { "\(path): \(message)" }

    static func posix(_ operation: String, path: String, errno code: Int32) -> SongBlobError {
        let full = code == ENOSPC || code == EDQUOT
        return SongBlobError(
            code: full ? .diskFull : .io, path: path,
            message: "\(operation) failed: \(String(cString: strerror(code)))")
    }
}

/// Song bytes stored by content: the file of song `id` is `<root>/<its first two hex
/// digits>/<its hex>`.
///
/// A blob is complete before ``put(_:id:)`` returns: the bytes go to a temporary file in the
/// same directory and are renamed into place, so a crash of the process leaves either no
/// blob or a complete one, never a partial one under the final name. With
/// ``syncsToDisk`` the file and the directory are also flushed (`fsync`) before the rename
/// returns, so that a power loss or a crash of the system cannot lose the blob either.
public struct SongBlobs: Sendable {
    public let root: String
    /// Whether each blob is flushed to the disk before ``put(_:id:)`` returns.
    public let syncsToDisk: Bool

    /// Opens (creating if needed) the blob directory `root`.
    public init(root: String, syncsToDisk: Bool = true) throws(SongBlobError) {
        self.root = root
        self.syncsToDisk = syncsToDisk
        do {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        } catch {
            throw SongBlobError(code: .io, path: root, message: "cannot create the blob directory: \(error)")
        }
    }

    /// Where the blob of `id` lives (its hex digits keep the path inside `root`).
    public func path(for id: SongID) -> String {
        "\(root)/\(Self.relativePath(for: id))"
    }

    /// Where the blob of `id` lives below ``root`` (its first two hex digits, then its hex).
    public static func relativePath(for id: SongID) -> String {
        "\(id.hex.prefix(2))/\(id.hex)"
    }

    /// True when `name`, a file's name in the store, is a blob's: a lowercase hex SHA-256.
    private static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    public func contains(_ id: SongID) -> Bool {
        FileManager.default.fileExists(atPath: path(for: id))
    }

    /// Stores `bytes` as the blob `id` (a no-op when a blob of that id and size exists).
    public func put(_ bytes: [UInt8], id: SongID) throws(SongBlobError) {
        guard !holds(id, size: bytes.count) else { return }
        let directory = directory(of: id)
        let temporary = try writeTemporary(in: directory, id: id) { descriptor, temporary in
            bytes.withUnsafeBytes { Self.write($0, to: descriptor, path: temporary) }
        }
        try publish(temporary, as: id, in: directory)
    }

    /// Stores the file at `path`, `size` bytes already checked to be the song `id`, as the blob
    /// `id` without copying it: the blob is a second (hard) link to the file, which must not
    /// change afterwards (an upload's finished file). When the blobs are on another file system
    /// than the file (or on one without hard links), the file is copied instead, a piece at a
    /// time. A no-op when a blob of that id and size exists.
    public func put(linking path: String, size: Int, id: SongID) throws(SongBlobError) {
        guard !holds(id, size: size) else { return }
        let directory = directory(of: id)
        var temporary = Self.temporaryPath(in: directory, id: id)
        if try makingDirectory(directory, { link(path, temporary) }) == 0 {
            if syncsToDisk, let failure = Self.flush(path) {
                unlink(temporary)
                throw failure
            }
        } else {
            let error = errno
            guard [EXDEV, EPERM, EMLINK, EOPNOTSUPP].contains(error) else { throw .posix("link", path: temporary, errno: error) }
            temporary = try copy(path, size: size, into: directory, id: id)
        }
        try publish(temporary, as: id, in: directory)
    }

    /// A copy of the `size` bytes of the file at `path`, as a temporary file of the blob `id`.
    private func copy(_ path: String, size: Int, into directory: String, id: SongID) throws(SongBlobError) -> String {
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw .posix("open", path: path, errno: errno) }
        defer { close(source) }
        return try writeTemporary(in: directory, id: id) { descriptor, temporary in
            var piece = [UInt8](repeating: 0, count: min(size, 1 << 20))
            var copied = 0
            while copied < size {
                let count = piece.withUnsafeMutableBytes { Foundation.read(source, $0.baseAddress!, min($0.count, size - copied)) }
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return .posix("read", path: path, errno: errno) }
                if count == 0 { return SongBlobError(code: .io, path: path, message: "ends at byte \(copied) of \(size)") }
                if let failure = piece.withUnsafeBytes({ Self.write(UnsafeRawBufferPointer(rebasing: $0[..<count]), to: descriptor, path: temporary) }) {
                    return failure
                }
                copied += count
            }
            return nil
        }
    }

    /// A new temporary file of the blob `id` in `directory`, filled by `fill` (given its
    /// descriptor and path, it answers the error it met) and flushed when ``syncsToDisk``;
    /// removed again when either fails.
    private func writeTemporary(
        in directory: String, id: SongID, fill: (Int32, String) -> SongBlobError?
    ) throws(SongBlobError) -> String {
        let temporary = Self.temporaryPath(in: directory, id: id)
        let descriptor = try makingDirectory(directory) { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw .posix("create", path: temporary, errno: errno) }
        var failure = fill(descriptor, temporary)
        if failure == nil, syncsToDisk, fsync(descriptor) != 0 {
            failure = .posix("fsync", path: temporary, errno: errno)
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw failure
        }
        return temporary
    }

    /// Writes all of `buffer` to `descriptor` (the file at `path`); the error met, if any.
    private static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, path: String) -> SongBlobError? {
        var offset = 0
        while offset < buffer.count {
            let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written < 0 { return .posix("write", path: path, errno: errno) }
            offset += written
        }
        return nil
    }

    /// Flushes the file at `path` to the disk; the error met, if any.
    private static func flush(_ path: String) -> SongBlobError? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .posix("open", path: path, errno: errno) }
        defer { close(descriptor) }
        return fsync(descriptor) == 0 ? nil : .posix("fsync", path: path, errno: errno)
    }

    /// Whether the blob `id` exists with `size` bytes.
    private func holds(_ id: SongID, size: Int) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path(for: id)) else { return false }
        return (attributes[.size] as? NSNumber)?.intValue == size
    }

    /// The directory of the blob `id` (its first two hex digits).
    private func directory(of id: SongID) -> String {
        "\(root)/\(id.hex.prefix(2))"
    }

    /// The result of `create` (a system call making a name in `directory`, answering -1 and
    /// setting `errno` on failure), made again once `directory` has been made when it failed
    /// for want of it: the directory is made only the first time one of its blobs is put,
    /// not looked for on every put.
    private func makingDirectory(_ directory: String, _ create: () -> Int32) throws(SongBlobError) -> Int32 {
        let result = create()
        guard result < 0 && errno == ENOENT else { return result }
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw .posix("mkdir", path: directory, errno: errno)
        }
        return create()
    }

    /// A fresh hidden name in `directory` for the blob `id` while it is being put.
    private static func temporaryPath(in directory: String, id: SongID) -> String {
        "\(directory)/.\(id.hex).\(UInt32.random(in: .min ... .max)).partial"
    }

    /// Renames the complete file `temporary` to the blob `id` (a blob of the same id put
    /// meanwhile is replaced, never half-written) and, when ``syncsToDisk``, flushes the
    /// directory. The temporary file is removed when the rename fails.
    private func publish(_ temporary: String, as id: SongID, in directory: String) throws(SongBlobError) {
        let finalPath = path(for: id)
        guard rename(temporary, finalPath) == 0 else {
            let error = SongBlobError.posix("rename", path: finalPath, errno: errno)
            unlink(temporary)
            throw error
        }
        // When both names are links to one file (two puts linking the same upload at once),
        // rename does nothing and leaves the temporary name: remove it.
        if access(temporary, F_OK) == 0 { unlink(temporary) }
        guard syncsToDisk else { return }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// The bytes of blob `id`.
    public func read(_ id: SongID) throws(SongBlobError) -> [UInt8] {
        let blobPath = path(for: id)
        guard let data = FileManager.default.contents(atPath: blobPath) else {
            let missing = !FileManager.default.fileExists(atPath: blobPath)
            throw SongBlobError(
                code: missing ? .missing : .io, path: blobPath,
                message: missing ? "no such blob" : "cannot read the blob")
        }
        return [UInt8](data)
    }

    /// Deletes blob `id` if it exists.
    public func remove(_ id: SongID) {
        unlink(path(for: id))
    }

    /// How old a partial file must be to be taken for abandoned by a crash.
    public static let abandonedPartialAge: TimeInterval = 3600

    /// The partial files (``temporaryPath(in:id:)``) last changed over ``abandonedPartialAge`` ago.
    private func abandonedPartials() -> [String] {
        var paths = [String]()
        let cutoff = Date().addingTimeInterval(-Self.abandonedPartialAge)
        for directory in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where directory.utf8.count == 2 {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(directory)")) ?? []
            where name.hasPrefix(".") && name.hasSuffix(".partial") {
                let path = "\(root)/\(directory)/\(name)"
                let changed = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
                if let changed, changed < cutoff { paths.append(path) }
            }
        }
        return paths
    }

    /// Every blob id in the store (partial files and anything else left out).
    public func ids() -> [SongID] {
        var ids = [SongID]()
        for directory in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where directory.utf8.count == 2 {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(directory)")) ?? []
            where Self.isBlobName(name) && name.hasPrefix(directory) {
                if let id = SongID(name) { ids.append(id) }
            }
        }
        return ids.sorted()
    }

    /// Removes every blob whose id is not in `needed` (with `dryRun`, only counts them), and
    /// the partial files a crash left behind (older than ``abandonedPartialAge``: a put in
    /// progress is never that old). Returns the files removed, their bytes, and the blobs kept.
    public func prune(keeping needed: Set<SongID>, dryRun: Bool = false) -> (removed: Int, bytes: Int64, kept: Int) {
        var removed = 0
        var bytes: Int64 = 0
        var kept = 0
        for path in abandonedPartials() {
            var status = stat()
            if stat(path, &status) == 0 { bytes += Int64(status.st_size) }
            if !dryRun { unlink(path) }
            removed += 1
        }
        for id in ids() {
            if needed.contains(id) {
                kept += 1
                continue
            }
            let path = path(for: id)
            var status = stat()
            if stat(path, &status) == 0 { bytes += Int64(status.st_size) }
            if !dryRun { unlink(path) }
            removed += 1
        }
        return (removed, bytes, kept)
    }
}
