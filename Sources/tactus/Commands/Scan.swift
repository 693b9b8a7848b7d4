import ArgumentParser
import Foundation
import Synchronization
import TactusClient
import TactusProtocol
import TactusZMQ

extension Tactus {
    /// `tactus scan [PATH...]`: the server compares its library roots with its library.
    struct Scan: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scan",
            abstract: "Ask the server to analyse its library roots in place: new and changed files are queued.",
            discussion: """
                The server walks its --library-root directories (or the given files and folders below them, \
                as paths on the server) without following symbolic links. A file whose size and modification \
                time are those recorded is unchanged and not read; any other is hashed: new bytes are queued \
                for analysis, bytes the library knows at a new path are a move (the song keeps its analyses) or \
                a copy, and recorded files that are gone are marked missing (they leave query results). \
                Nothing is copied into the server's data directory. Prints a summary (new, changed, moved, \
                missing, unchanged, copies, skipped with reasons); --json prints it as one JSON object. \
                `tactus serve --watch` scans what changes as it changes.
                """
        )

        @Argument(help: ArgumentHelp("Files or folders below the server's library roots (default: every root).", valueName: "path"))
        var paths: [String] = []

        @Flag(help: "Print the summary as JSON.")
        var json = false

        @Option(help: ArgumentHelp("Seconds to wait for the scan's summary.", valueName: "seconds"))
        var wait = 3600.0

        @Option(help: ArgumentHelp(
            "The server's events endpoint, for the progress line (default: the server's host, its port plus 2).", valueName: "endpoint"))
        var events: String?

        @OptionGroup var server: ServerOptions

        func run() throws {
            let absolute = paths.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
            if !json {
                FileHandle.standardError.write(
                    Data("scanning \(absolute.isEmpty ? "every library root" : absolute.joined(separator: ", "))...\n".utf8))
            }
            let endpoint = events ?? CoordinatorEndpoints.events(forFrontend: server.endpoint)
            let progress = try endpoint.flatMap { isatty(STDERR_FILENO) == 1 ? try ScanProgressLine(events: $0, curve: server.curve.keys()) : nil }
            let summary = try reportingFailures {
                defer { progress?.stop() }
                return try server.client().scan(
                    ScanRequest(paths: absolute.isEmpty ? nil : absolute), wait: .milliseconds(Int64(wait * 1000)))
            }
            if json {
                try Output.jsonLine(summary)
                return
            }
            Self.printSummary(summary)
        }

        static func printSummary(_ summary: ScanSummary) {
            print(
                "\(summary.files) files in \(String(format: "%.1f", summary.seconds)) s: \(summary.new) new, \(summary.changed) changed, "
                    + "\(summary.moved) moved, \(summary.missing) missing, \(summary.unchanged) unchanged, \(summary.copies) copies, "
                    + "\(summary.skipped.count) skipped; \(summary.queuedJobs) jobs queued")
            if !summary.skipped.isEmpty {
                Output.table(["skipped", "reason"], summary.skipped.map { [$0.path, $0.reason] })
            }
        }
    }

    /// `tactus prune`: removes the song bytes the server keeps that no job needs.
    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Remove the uploaded song bytes (DATA/blobs) that no queued or running job needs.",
            discussion: """
                Songs analysed in place are never copied; uploaded songs are kept only until their jobs end \
                unless the server runs with --keep-uploads. Prune removes what is left (kept uploads, blobs of \
                older versions). A song whose bytes are gone keeps its analyses; submitting it again with \
                --force analyses it again. With --json: {"removed", "removed_bytes", "kept", "dry_run"}.
                """
        )

        @Flag(help: "Only count what would be removed.")
        var dryRun = false

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var server: ServerOptions

        func run() throws {
            let summary = try reportingFailures { try server.client().prune(PruneRequest(dryRun: dryRun ? true : nil)) }
            if json {
                try Output.jsonLine(summary)
            } else {
                let verb = summary.dryRun ? "would remove" : "removed"
                print("\(verb) \(summary.removed) song blobs (\(summary.removedBytes) bytes); kept \(summary.kept) that queued or running jobs need")
            }
        }
    }
}

/// `scanning  412/1000 files: 3 new, 0 changed, 409 unchanged, 0 skipped` on standard error,
/// from the server's `scan.progress` events, until ``stop()``.
final class ScanProgressLine: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(events: String, curve: CurveClientKeys?) throws {
        let thread = Thread { [self] in
            defer { finished.signal() }
            guard let context = try? ZMQContext(socketLinger: .zero),
                let subscriber = try? EventSubscriber(endpoint: events, topics: [Event.scanTopic], context: context, curve: curve)
            else { return }
            var drawn = false
            while !stopped.load(ordering: .sequentiallyConsistent) {
                guard case .scanProgress(let progress)? = try? subscriber.next(timeout: .milliseconds(100)) else { continue }
                let line = "scanning  \(progress.looked ?? 0)/\(progress.files) files: \(progress.new) new, \(progress.changed) changed, "
                    + "\(progress.unchanged) unchanged, \(progress.skipped.count) skipped"
                FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
                drawn = true
            }
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            context.shutdown()
        }
        thread.start()
    }

    /// Stops following and erases the line.
    func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        finished.wait()
    }
}
