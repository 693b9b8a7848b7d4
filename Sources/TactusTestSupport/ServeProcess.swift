import Foundation

/// A real `tactus serve` process on loopback ports chosen by the system, its data in a
/// directory of the caller's, its endpoints read from the first line it prints (`--json`).
/// For the tests and the benchmarks that need a running server.
///
/// ```swift
/// let server = try ServeProcess(dataDirectory: directory.path)
/// let client = try TactusClient(server: server.endpoints.frontend)
/// ```
public final class ServeProcess {
    /// The endpoints `tactus serve --json` prints when ready.
    public struct Endpoints: Sendable, Hashable, Decodable {
        public var frontend: String
        public var backend: String
        public var events: String
    }

    /// Why the server could not be started.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let process = Process()
    public let dataDirectory: String
    public let endpoints: Endpoints
    private let errorPipe: Pipe?

    /// Starts `executable serve` with `workersPerDetector` local workers (each offers every
    /// built-in detector, so that is also the number of workers per detector) and
    /// `extraArguments` added (without `--web` among them, no web gateway: `--no-web`); with `captureErrors`, its standard error is kept for ``errors``
    /// (only for servers that log little: the pipe is read once the server has stopped).
    /// `launcher` runs the command line `tactus serve ...` it is given (in another network
    /// namespace, say) and must exec it, so that the process started is the server.
    public init(
        executable: String = CLI.binary, dataDirectory: String, workersPerDetector: Int = 1, extraArguments: [String] = [],
        captureErrors: Bool = false, launcher: (([String]) -> (executable: String, arguments: [String]))? = nil
    ) throws {
        self.dataDirectory = dataDirectory
        let arguments =
            [
                "serve", "--data", dataDirectory, "--workers", String(workersPerDetector), "--json",
                "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
                "--log-level", "error",
            ] + (extraArguments.contains("--web") ? [] : ["--no-web"]) + extraArguments
        let (launched, launchedArguments) = launcher?([executable] + arguments) ?? (executable, arguments)
        process.executableURL = URL(fileURLWithPath: launched)
        process.arguments = launchedArguments
        let output = Pipe()
        process.standardOutput = output
        errorPipe = captureErrors ? Pipe() : nil
        process.standardError = errorPipe ?? FileHandle.nullDevice
        try process.run()
        // The first line on standard output is the bound endpoints.
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let newline = line.firstIndex(of: UInt8(ascii: "\n")),
            let endpoints = try? JSONDecoder().decode(Endpoints.self, from: line[..<newline])
        else {
            process.terminate()
            process.waitUntilExit()
            throw Failure(description: "\(executable) serve printed no endpoints")
        }
        self.endpoints = endpoints
    }

    /// The web gateway's URL (`http://127.0.0.1:PORT/`) once it listens, from DATA/web.json, for a
    /// server started with `--web` in its extra arguments (the others get `--no-web`); nil when
    /// it did not listen within `timeout` seconds.
    public func webURL(timeout: TimeInterval = 30) -> String? {
        struct Announcement: Decodable { var url: String }
        return try? Wait.value("the web gateway's DATA/web.json", timeout: .seconds(timeout), poll: .milliseconds(50)) {
            FileManager.default.contents(atPath: dataDirectory + "/web.json").flatMap {
                try? JSONDecoder().decode(Announcement.self, from: $0).url
            }
        }
    }

    /// The server's process id.
    public var processID: Int32 { process.processIdentifier }

    /// What the server wrote to standard error, once it has stopped (empty unless captured).
    public var errors: String {
        guard let errorPipe, !process.isRunning else { return "" }
        return String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// The worker processes the server started (its children running `tactus worker`).
    public var workerProcessIDs: [Int32] { Self.children(of: processID).filter { Self.subcommand(of: $0) == "worker" } }

    /// The service host processes the server started (its children running `tactus service-host`).
    public var serviceHostProcessIDs: [Int32] { Self.children(of: processID).filter { Self.subcommand(of: $0) == "service-host" } }

    /// The first argument of process `pid` (from Linux's `/proc/PID/cmdline`): the subcommand of a `tactus` process.
    public static func subcommand(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let arguments = data.split(separator: 0, omittingEmptySubsequences: false)
        return arguments.count > 1 ? String(decoding: arguments[1], as: UTF8.self) : nil
    }

    /// The processes whose parent is `parent` (from Linux's `/proc/PID/stat`).
    public static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[1]) == parent
        }
    }

    /// Sends `signal` (SIGTERM: running jobs finish, then the server exits) and waits for the
    /// process to end; returns its termination status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            let workers = Self.children(of: processID)
            kill(process.processIdentifier, SIGKILL)
            for worker in workers { kill(worker, SIGKILL) }
            process.waitUntilExit()
        }
    }
}
