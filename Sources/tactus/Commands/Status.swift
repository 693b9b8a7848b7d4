import ArgumentParser
import Foundation
import TactusModel
import TactusProtocol

extension Tactus {
    /// `tactus status [JOB|SONG]`: a job, a song's jobs, or the server.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show a job, a song's jobs, or the server's state.",
            discussion: """
                With a job id (a number): that job. With a song id: every job of the song. With \
                neither: the server's queue per detector, its workers, jobs per second over the \
                last minute and uptime.

                With --json: one job object per line ({job, song, detector, state, attempt, \
                error?}), or for the server one object {queue, workers [{worker_id, detector, \
                version, job?}], jobs_per_second, uptime_s, accepting}.
                """
        )

        @Argument(help: ArgumentHelp(
            "A job id, or a song: a SHA-256 (or 8+ of its first digits), a file, a stored path or file name.",
            valueName: "job-or-song"))
        var target: String?

        @Flag(help: "Print JSON Lines.")
        var json = false

        @OptionGroup var server: ServerOptions

        func validate() throws {
            if let target { _ = try JobOrSong(target) }
        }

        func run() throws {
            let client = try server.client()
            let response: StatusResponse
            switch try target.map(JobOrSong.init) {
            case .job(let job): response = try client.status(job: job)
            case .song(let song): response = try client.status(song: try SongLookup.songName(song, on: client))
            case nil: response = try client.status()
            }
            for job in response.jobs {
                if json { try Output.jsonLine(job) } else { print(ServerText.job(job)) }
            }
            if let state = response.server {
                if json { try Output.jsonLine(state) } else { print(lines: Self.lines(state)) }
            }
        }

        static func lines(_ state: ServerStatus) -> [String] {
            var lines = [
                "\(state.accepting ? "accepting work" : "shutting down"), up \(ServerText.duration(state.uptimeS)), "
                    + String(format: "%.2f jobs/s over the last minute", state.jobsPerSecond)
            ]
            let queued = state.queue.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append("queued: " + (queued.isEmpty ? "nothing" : queued.joined(separator: ", ")))
            lines.append("workers: \(state.workers.count)")
            for worker in state.workers.sorted(by: { ($0.detector, $0.workerId) < ($1.detector, $1.workerId) }) {
                let job = worker.job.map { "job \($0)" } ?? "idle"
                lines.append("  \(worker.workerId)  \(worker.detector) \(worker.version)  " + job)
            }
            return lines
        }
    }
}
