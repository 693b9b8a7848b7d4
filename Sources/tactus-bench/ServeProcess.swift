import ArgumentParser
import Foundation
import TactusClient
import TactusTestSupport

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

extension ServeProcess {
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
        throw BenchFailure("the server's workers did not all connect within 60 s")
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
