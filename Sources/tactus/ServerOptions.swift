import ArgumentParser
import Foundation
import TactusClient
import TactusProtocol

/// `--server` and `--timeout`, shared by the commands that talk to a coordinator.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The coordinator's frontend (default: $TACTUS_SERVER, else tcp://127.0.0.1:5555).", valueName: "endpoint"))
    var server: String?

    @Option(help: ArgumentHelp(
        "Seconds to wait for an answer; an unanswered request is sent once more, then fails.", valueName: "seconds"))
    var timeout = 2.5

    @OptionGroup var curve: CurveClientOptions

    /// The frontend to talk to.
    var endpoint: String {
        server ?? ProcessInfo.processInfo.environment["TACTUS_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? CoordinatorEndpoints.frontend
    }

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be above 0 and at most 3600 seconds.") }
        guard endpoint.contains("://") else {
            throw ValidationError("--server takes an endpoint such as tcp://HOST:PORT, not '\(endpoint)'.")
        }
    }

    /// A client of the frontend.
    func client() throws -> TactusClient {
        try TactusClient(server: endpoint, timeout: .milliseconds(Int64((timeout * 1000).rounded())), curve: curve.keys())
    }
}

/// How the client commands print what the server says.
enum ServerText {
    /// `job 12  abcdef012345  comb-filter  done  attempt 1`, and the error of a failed job.
    static func job(_ job: JobInfo) -> String {
        var line = "job \(job.job)  \(job.song.prefix(12))  \(job.detector)  \(job.state.rawValue)  attempt \(job.attempt)"
        if let error = job.error { line += "  \(error.code): \(error.message)" }
        return line
    }

    static func bpm(_ bpm: Double?) -> String {
        bpm.map { String(format: "%.2f BPM", $0) } ?? "no tempo"
    }

    /// `1 h 02 min`, `3 min 05 s`, `12 s`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        let total = Int(seconds.rounded())
        if total >= 3600 { return String(format: "%d h %02d min", total / 3600, total % 3600 / 60) }
        if total >= 60 { return String(format: "%d min %02d s", total / 60, total % 60) }
        return "\(total) s"
    }
}

/// A job id (all digits) or a song id, as `status` and `cancel` take them.
enum JobOrSong {
    case job(Int64)
    case song(String)

    init(_ text: String) throws {
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            guard let job = Int64(text), job >= 1 else { throw ValidationError("'\(text)' is not a job id (1 or more).") }
            self = .job(job)
            return
        }
        let allowed = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "_" || c == "-") }
        guard (1...128).contains(text.count), text.allSatisfy(allowed) else {
            throw ValidationError("'\(text)' is neither a job id (a number) nor a song id (64 hex digits).")
        }
        self = .song(text)
    }
}
