import ArgumentParser
import Foundation
import TactusClient

/// The `--tactus` option of the benchmarks that start a server: the executable to run.
struct TactusExecutableOption: ParsableArguments {
    @Option(help: ArgumentHelp("The tactus executable (default: next to this benchmark).", valueName: "path"))
    var tactus: String?

    /// The executable's path, checked to be one.
    func path() throws -> String {
        let executable = tactus ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("tactus").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchFailure("\(executable): no tactus executable (build it with `swift build -c release`)")
        }
        return executable
    }
}

/// A `tactus serve` process started by a benchmark: loopback ports chosen by the system, its
/// data in a directory of the caller's, its endpoints read from the first line it prints.
final class ServeProcess {
    /// The endpoints `tactus serve --json` prints when ready.
    struct Endpoints: Decodable {
        var frontend: String
        var backend: String
        var events: String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let endpoints: Endpoints
    private let process = Process()

    /// Starts `executable serve` with `arguments` added (`--workers N`, `--no-local-workers`).
    init(executable: String, dataDirectory: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            [
                "serve", "--data", dataDirectory, "--json", "--log-level", "error",
                "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
            ] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
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
            throw Failure(description: "\(executable) serve printed no endpoints (is the release build complete?)")
        }
        self.endpoints = endpoints
    }

    var processID: Int32 { process.processIdentifier }

    /// Waits until the server offers `perDetector` connected workers for each of `detectors`.
    func awaitWorkers(detectors: [String], perDetector: Int) throws {
        let client = try TactusClient(server: endpoints.frontend, timeout: .seconds(5))
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let offered = try client.detectors().detectors
            let ready = detectors.allSatisfy { name in offered.contains { $0.detector.name == name && $0.workers >= perDetector } }
            if ready { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw Failure(description: "the server's workers did not all connect within 60 s")
    }

    /// The worker processes the server started (its children).
    var workerProcessIDs: [Int32] {
        ProcessCPU.children(of: processID)
    }

    /// Stops the server with SIGTERM (it lets running jobs finish, then exits) and waits.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            let workers = workerProcessIDs
            kill(process.processIdentifier, SIGKILL)
            for worker in workers { kill(worker, SIGKILL) }
            process.waitUntilExit()
        }
    }
}

/// CPU time of processes, from Linux's `/proc/PID/stat`.
enum ProcessCPU {
    /// User plus system CPU seconds of process `pid` (all its threads) so far; 0 when gone.
    static func seconds(_ pid: Int32) -> Double {
        guard let fields = statFields(pid), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12])
        else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The processes whose parent is `pid`.
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { child in
            guard let fields = statFields(child), fields.count > 1 else { return false }
            return Int32(fields[1]) == pid
        }
    }

    /// The fields of `/proc/PID/stat` after the command name: state first, then the parent.
    private static func statFields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// Busy and total jiffies of the whole machine (`/proc/stat`, first line).
    static func machine() -> (busy: Double, total: Double) {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first
        else { return (0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return (0, 0) }
        let total = values.prefix(8).reduce(0, +)
        return (total - values[3] - values[4], total)  // idle and iowait are not busy
    }
}
