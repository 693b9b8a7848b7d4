import ArgumentParser
import Foundation
import TactusWorker

extension Tactus {
    /// `tactus health --file PATH`: whether a worker started with `--health-file PATH` has heard
    /// from its coordinator recently; the exit status is the answer (a container health check).
    struct Health: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "health",
            abstract: "Tell whether a worker is in touch with its coordinator (exit 0) or not (exit 1).",
            discussion: """
                A worker started with --health-file PATH sets the file's modification time at \
                every message from its coordinator (at least every 2.5 s while connected) and \
                removes the file when it stops. The worker is healthy when the file is at most \
                --max-age seconds old; a missing file (a worker that has not yet heard from its \
                coordinator, or has stopped) is unhealthy.

                With --json, one object: healthy, file, age_s (null without the file), max_age_s.
                """
        )

        @Option(help: ArgumentHelp("The worker's --health-file.", valueName: "path"))
        var file: String

        @Option(help: ArgumentHelp(
            "The oldest the file may be, in seconds (default 10: four heartbeat intervals).", valueName: "seconds"))
        var maxAge = 10.0

        @Flag(help: "Print one JSON object.")
        var json = false

        func validate() throws {
            guard maxAge > 0, maxAge.isFinite else { throw ValidationError("--max-age must be a positive number of seconds.") }
        }

        func run() throws {
            let age: TimeInterval?
            do {
                age = try HealthFile(path: file).age()
            } catch {
                throw CommandFailure(error.description)
            }
            let healthy = age.map { $0 <= maxAge } ?? false
            if json {
                try Output.jsonLine(HealthReport(healthy: healthy, file: file, ageS: age, maxAgeS: maxAge))
            } else if let age {
                let heard = String(format: "last heard from its coordinator %.1f s ago", age)
                print(healthy ? "healthy: \(heard)" : "unhealthy: \(heard) (limit \(maxAge) s)")
            } else {
                print("unhealthy: no \(file) (the worker has not heard from its coordinator, or has stopped)")
            }
            if !healthy { throw ExitCode.failure }
        }
    }
}

/// What `tactus health --json` prints.
private struct HealthReport: Encodable {
    var healthy: Bool
    var file: String
    var ageS: Double?
    var maxAgeS: Double

    enum CodingKeys: String, CodingKey {
        case healthy, file
        case ageS = "age_s"
        case maxAgeS = "max_age_s"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(healthy, forKey: .healthy)
        try container.encode(file, forKey: .file)
        try container.encode(ageS, forKey: .ageS)  // null, not absent, without the file
        try container.encode(maxAgeS, forKey: .maxAgeS)
    }
}
