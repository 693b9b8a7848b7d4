import Foundation

/// Runs the built `tactus` binary (`.build/debug/tactus`, found from this file's path) as a
/// real process, for the tests of its commands, and other programs (`python3`) the same way.
public enum CLI {
    /// The package's root directory.
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The `tactus` executable built by `swift build`.
    public static let binary = repositoryRoot + "/.build/debug/tactus"

    /// What a run of `tactus` left behind.
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
        /// How long the program ran, in seconds.
        public var seconds: Double

        /// Each line of standard output parsed as a JSON object.
        public var jsonLines: [[String: Any]] {
            standardOutput.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    /// Why `tactus` could not be run.
    public struct LaunchError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `tactus` with `arguments` (and `environment` added to this process's), in
    /// `directory` when given, and waits for it. Output goes through files, so no pipe can fill
    /// up and block the child.
    public static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw LaunchError(description: "\(binary) is missing: build the tactus binary first (swift build)")
        }
        return try runProgram(binary, arguments, environment: environment, in: directory)
    }

    /// Runs `python3` with `arguments` the same way (killed after `timeout` when given).
    public static func python(_ arguments: [String], environment: [String: String] = [:], timeout: Duration? = nil) throws -> Result {
        try runProgram("/usr/bin/env", ["python3"] + arguments, environment: environment, timeout: timeout)
    }

    /// Whether `python3` can import pyzmq and numpy, which the protocol's Python examples need
    /// (`make deps` installs them).
    public static let pythonHasZMQ: Bool = (try? python(["-c", "import zmq, numpy"]).status) == 0

    /// Runs another program the same way; with `timeout`, the program is killed (SIGKILL) if it
    /// runs longer.
    public static func runProgram(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], in directory: String? = nil,
        timeout: Duration? = nil
    ) throws -> Result {
        let outputs = try TemporaryDirectory(prefix: "tactus-cli")
        let outputPath = outputs.file("stdout"), errorPath = outputs.file("stderr")
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            FileManager.default.createFile(atPath: errorPath, contents: nil)
        else { throw LaunchError(description: "cannot create output files in \(outputs.path)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let start = Date()
        try process.run()
        let watchdog = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + Double(timeout.components.seconds), execute: watchdog)
        }
        process.waitUntilExit()
        watchdog.cancel()
        return Result(
            status: process.terminationStatus,
            standardOutput: try String(contentsOfFile: outputPath, encoding: .utf8),
            standardError: try String(contentsOfFile: errorPath, encoding: .utf8),
            seconds: Date().timeIntervalSince(start))
    }
}
