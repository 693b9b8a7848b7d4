import Foundation

/// A fresh directory under the system's temporary directory, deleted with its contents
/// when the value is released. For tests and benchmarks that write real files.
public final class TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Creates the directory; `prefix` starts its name, to recognise leftovers.
    public init(prefix: String = "tactus") throws {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/\(prefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String {
        "\(path)/\(name)"
    }
}
