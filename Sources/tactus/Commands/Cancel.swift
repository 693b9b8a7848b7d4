import ArgumentParser
import Foundation
import TactusProtocol

extension Tactus {
    /// `tactus cancel JOB|SONG`: cancels unfinished jobs.
    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract: "Cancel a job, or every unfinished job of a song.",
            discussion: """
                Finished jobs are left alone; a running job's result is discarded when it comes. \
                With --json: {"cancelled": [job ids]}.
                """
        )

        @Argument(help: ArgumentHelp(
            "A job id, or a song: a SHA-256 (or 8+ of its first digits), a file, a stored path or file name.",
            valueName: "job-or-song"))
        var target: String

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var server: ServerOptions

        func validate() throws {
            _ = try JobOrSong(target)
        }

        func run() throws {
            let client = try server.client()
            let request: CancelRequest
            switch try JobOrSong(target) {
            case .job(let job): request = CancelRequest(job: job)
            case .song(let song): request = CancelRequest(song: try SongLookup.songName(song, on: client))
            }
            let response = try client.cancel(request)
            if json {
                try Output.jsonLine(response)
            } else if response.cancelled.isEmpty {
                print("nothing to cancel")
            } else {
                print("cancelled: " + response.cancelled.map { "job \($0)" }.joined(separator: ", "))
            }
        }
    }
}
