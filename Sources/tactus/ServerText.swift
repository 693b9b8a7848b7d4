import Foundation
import TactusModel
import TactusProtocol

/// How the client commands print what the server says.
enum ServerText {
    /// `job 12  abcdef012345  comb-filter  done  attempt 1`, and the error of a failed job (one
    /// line when printed, whatever the error's message holds).
    static func job(_ job: JobInfo) -> String {
        var line = "job \(job.job)  \(job.song.short)  \(job.detector)  \(job.state.rawValue)  attempt \(job.attempt)"
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
