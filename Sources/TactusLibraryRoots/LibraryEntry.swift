import Foundation

/// A regular file below a library root opened together with the folder that holds it (see
/// ``LibraryRoots/openEntry(_:)``), so that the file can be replaced in place through
/// descriptors only: a copy made with `openat` in the folder, renamed over the file's name with
/// `renameat`, never a path opened again. Both are closed when released.
public final class LibraryEntry: Sendable {
    /// The file, open for reading.
    public let file: LibraryFile
    /// The file's name in its folder.
    public let name: String
    private let folder: OpenFolder

    init(file: LibraryFile, folder: OpenFolder, name: String) {
        self.file = file
        self.folder = folder
        self.name = name
    }

    /// The descriptors and names, valid as long as this entry lives.
    public var descriptors: OpenFileInFolder {
        OpenFileInFolder(file: file.descriptor, folder: folder.descriptor, name: name, path: file.path)
    }
}

/// A folder opened by ``LibraryRoots`` (read-only, `O_DIRECTORY`), closed with this value.
final class OpenFolder: Sendable {
    let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A regular file and its folder as open descriptors that someone else owns (a
/// ``LibraryEntry``, or a service host's call), with the file's name in the folder and the name
/// messages give it: what tags are read and written through.
public struct OpenFileInFolder: Sendable, Hashable {
    /// The file, open for reading.
    public var file: Int32
    /// The folder that holds it, open.
    public var folder: Int32
    /// The file's name in the folder: one component, no `/`.
    public var name: String
    /// How messages name the file (its path as named or stored).
    public var path: String

    public init(file: Int32, folder: Int32, name: String, path: String) {
        self.file = file
        self.folder = folder
        self.name = name
        self.path = path
    }
}
