import Foundation
import TactusModel

/// A file a render writes for a person: written whole as a new temporary file in the folder of
/// its path, then put in place by ``place()``. It never writes through a symbolic link (the
/// temporary is created with `O_CREAT | O_EXCL | O_NOFOLLOW`, and a link, a name, is only ever
/// replaced, never followed), never over one of the files being read (the same device and
/// inode), never over a SQLite database or its write-ahead log (a library), never over a
/// device, FIFO or socket, and over an existing file only when `replacing` (`--force`); without it the
/// temporary is linked into place, which fails if anything has appeared there meanwhile. A file
/// never placed (a failed render) leaves nothing behind.
public final class OutputFile {
    /// The path as given.
    public let path: String
    /// The temporary file, open for writing.
    let descriptor: Int32
    private let folder: Int32
    private let name: String
    private let temporaryName: String
    private let replacing: Bool
    /// The device and inode of each file being read.
    private let inputs: [FileIdentity]
    private var placed = false

    /// Checks `path` (refused: a directory; an existing file unless `replacing`; one of
    /// `inputs`, whatever `replacing`) and creates the temporary beside it.
    public init(path: String, replacing: Bool = false, sparing inputs: [String] = []) throws(StretchError) {
        self.path = path
        self.replacing = replacing
        self.inputs = inputs.compactMap(FileIdentity.init(following:))
        (folder, name) = try Self.openFolder(of: path)
        do throws(StretchError) {
            try Self.check(name, in: folder, path: path, replacing: replacing, inputs: self.inputs)
            (temporaryName, descriptor) = try Self.createTemporary(in: folder, beside: name, path: path)
        } catch {
            close(folder)
            throw error
        }
    }

    deinit {
        close(descriptor)
        if !placed { unlinkat(folder, temporaryName, 0) }
        close(folder)
    }

    /// Appends `bytes` to the temporary.
    public func write(_ bytes: [UInt8]) throws(StretchError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .cannotWrite(path: path, reason: Self.errorText()) }
            offset += written
        }
    }

    /// Puts the complete file at its path: linked there (refused if anything is there now), or
    /// with `replacing` renamed over what is there (never over an input, never into a folder).
    public func place() throws(StretchError) {
        guard fsync(descriptor) == 0 else { throw .cannotWrite(path: path, reason: Self.errorText()) }
        if replacing {
            try Self.check(name, in: folder, path: path, replacing: true, inputs: inputs)
            guard renameat(folder, temporaryName, folder, name) == 0 else {
                throw .cannotWrite(path: path, reason: Self.errorText())
            }
        } else {
            guard linkat(folder, temporaryName, folder, name, 0) == 0 else {
                throw .cannotWrite(path: path, reason: errno == EEXIST ? Self.exists : Self.errorText())
            }
            unlinkat(folder, temporaryName, 0)
        }
        placed = true
    }

    private static let exists = "it exists (give --force to replace it)"

    /// Refuses what is at `name` in `folder` now, looked at without following a link: a
    /// directory, one of the inputs, and anything unless `replacing`.
    private static func check(_ name: String, in folder: Int32, path: String, replacing: Bool, inputs: [FileIdentity])
        throws(StretchError)
    {
        var status = stat()
        guard fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return }
            throw .cannotWrite(path: path, reason: errorText())
        }
        if let refusal = OutputPath.refusal(status) { throw .cannotWrite(path: path, reason: refusal) }
        if inputs.contains(FileIdentity(status)) {
            throw .cannotWrite(path: path, reason: "it is the file being read (tactus never writes over its input)")
        }
        if !replacing { throw .cannotWrite(path: path, reason: exists) }
        if status.st_mode & S_IFMT == S_IFREG, isDatabase(name, in: folder) {
            throw .cannotWrite(path: path, reason: "it is a SQLite database or its write-ahead log (a Tactus library?): tactus never writes over one")
        }
    }

    /// Whether the regular file `name` in `folder` begins as a SQLite database ("SQLite format
    /// 3" and a NUL) or its write-ahead log (magic 0x377f0682 or 0x377f0683, big-endian) does:
    /// a library, perhaps a running server's, that a mistyped output path must not replace.
    private static func isDatabase(_ name: String, in folder: Int32) -> Bool {
        let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 16) }
        if count == 16, header == Array("SQLite format 3\0".utf8) { return true }
        return count >= 4 && header[0] == 0x37 && header[1] == 0x7F && header[2] == 0x06 && (header[3] == 0x82 || header[3] == 0x83)
    }

    /// The folder of `path`, open, and the name in it; a path that can only name a folder is refused.
    private static func openFolder(of path: String) throws(StretchError) -> (folder: Int32, name: String) {
        guard !path.isEmpty else { throw .cannotWrite(path: path, reason: "no file name") }
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, name != ".", name != ".." else { throw .cannotWrite(path: path, reason: "it is a directory") }
        let folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let folder = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw .cannotWrite(path: path, reason: "its folder: " + errorText()) }
        return (folder, name)
    }

    /// A new file `.NAME.tactus-RANDOM` in `folder`, created there and nowhere else.
    private static func createTemporary(in folder: Int32, beside name: String, path: String) throws(StretchError)
        -> (name: String, descriptor: Int32)
    {
        for _ in 0..<16 {
            let candidate = ".\(name.prefix(200)).tactus-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let descriptor = openat(folder, candidate, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if descriptor >= 0 { return (candidate, descriptor) }
            guard errno == EEXIST else { throw .cannotWrite(path: path, reason: errorText()) }
        }
        throw .cannotWrite(path: path, reason: "no free name for a temporary file beside it")
    }

    private static func errorText() -> String {
        String(cString: strerror(errno))
    }
}

/// A file as the kernel knows it: its device and inode, whatever its names.
private struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// The file `path` names, links followed (as a decoder opens it); nil when there is none.
    init?(following path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}
