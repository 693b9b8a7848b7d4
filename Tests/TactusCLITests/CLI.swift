import Foundation
import TactusTestSupport
import Testing

/// Runs the built `tactus` binary (`.build/debug/tactus`, found from this file's path) as a
/// real process.
enum CLI {
    /// The package's root directory.
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let binary = repositoryRoot + "/.build/debug/tactus"

    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String

        /// Each line of standard output parsed as a JSON object.
        var jsonLines: [[String: Any]] {
            standardOutput.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    /// Runs `tactus` with `arguments` and waits for it. Output goes through files, so no
    /// pipe can fill up and block the child.
    static func run(_ arguments: [String]) throws -> Result {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the tactus binary first (swift build)")
        let directory = try TemporaryDirectory(prefix: "tactus-cli")
        let outputPath = directory.file("stdout"), errorPath = directory.file("stderr")
        #expect(FileManager.default.createFile(atPath: outputPath, contents: nil))
        #expect(FileManager.default.createFile(atPath: errorPath, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            standardOutput: try String(contentsOfFile: outputPath, encoding: .utf8),
            standardError: try String(contentsOfFile: errorPath, encoding: .utf8))
    }
}
