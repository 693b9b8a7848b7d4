import Foundation

/// Another process (SQLite's shell) holding the write lock of a library file until released,
/// for the tests of what a locked library does to its users.
public final class SQLiteLockHolder {
    /// Why the shell did not take the lock.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let process = Process()
    private let input = Pipe()

    /// Returns once the shell holds the lock: `BEGIN EXCLUSIVE`, then `statements` (SQL ending
    /// with `;`, run inside the transaction).
    public init(path: String, statements: String = "") throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", path]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("BEGIN EXCLUSIVE;\n\(statements)\nSELECT 'locked';\n".utf8))
        var said = Data()
        while !said.contains(Data("locked".utf8)) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw Failure(description: "sqlite3 did not take the lock of \(path)") }
            said.append(chunk)
        }
    }

    /// Commits (nothing was changed) and lets the shell exit.
    public func release() {
        input.fileHandleForWriting.write(Data("COMMIT;\n.quit\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
