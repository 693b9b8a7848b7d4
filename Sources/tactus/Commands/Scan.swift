import ArgumentParser
import Foundation
import Logging
import Synchronization
import TactusClient
import TactusCoordinator
import TactusLibraryRoots
import TactusLibraryService
import TactusProtocol
import TactusStore
import TactusZMQ

extension Tactus {
    /// `tactus scan [PATH...]`: the server compares its library roots with its library.
    struct Scan: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scan",
            abstract: "Analyse library roots in place: ask the server, or with --db scan and analyse here.",
            discussion: """
                The server walks its --library-root directories (or the given files and folders below them, \
                as paths on the server) without following symbolic links. A file whose size and modification \
                time are those recorded is unchanged and not read; any other is hashed (by the workers that \
                share the root, else by the server; hashed_by_workers counts the former): new bytes are queued \
                for analysis, bytes the library knows at a new path are a move (the song keeps its analyses) or \
                a copy, and recorded files that are gone are marked missing (they leave query results). \
                A file refused for its content (not audio, damaged) by two scans in a row is remembered with \
                its size and time, and listed as skipped by later scans without being read until it changes \
                (touch it to have it read again). Nothing is copied into the server's data directory. Prints a summary (new, \
                changed, moved, missing, unchanged, copies, skipped with reasons); --json prints it as one \
                JSON object. \
                `tactus serve --watch` scans what changes as it changes.

                With --db FILE, no server is involved: this command opens the library file itself (created \
                if missing; do not point it at the library of a running server, ask the server instead), \
                walks the --library-root directories (repeatable; by default the roots the library has \
                recorded) or the given paths below them, classifies every file exactly as a server's scan \
                does, and analyses the new and changed songs here, one at a time, with the default detectors \
                (`tactus detectors`). Each song's analyses are stored before its location, so an interrupted \
                scan is finished by the next one. A song that cannot be decoded has its failure stored (it \
                is listed under "failed", and not tried again until the file changes). queued_jobs then \
                counts the analyses run. A progress line is drawn on standard error when it is a terminal.

                Exit status: 0 when the scan ran (skipped files are in the summary), 1 when it could not \
                (no server, a root that cannot be opened, a library that cannot be written), 2 on usage errors.
                """
        )

        @Argument(help: ArgumentHelp(
            "Files or folders below the library roots (default: every root).", valueName: "path"))
        var paths: [String] = []

        @Flag(help: "Print the summary as JSON.")
        var json = false

        @Option(help: ArgumentHelp("Seconds to wait for the server's summary.", valueName: "seconds"))
        var wait = 3600.0

        @Option(help: ArgumentHelp(
            "The server's events endpoint, for the progress line (default: the server's host, its port plus 2).", valueName: "endpoint"))
        var events: String?

        @OptionGroup var library: LibraryOptions

        @Option(name: .customLong("library-root"), help: ArgumentHelp(
            "With --db: a directory to scan (repeatable; default: the roots the library records).", valueName: "dir"))
        var libraryRoots: [String] = []

        @Option(help: ArgumentHelp("With --db: skip files larger than this (too-large), as `serve --max-song-bytes`.", valueName: "bytes"))
        var maxSongBytes = 256 << 20

        @Flag(help: "With --db: after the scan, keep scanning what changes below the roots (inotify), as `serve --watch` does, until interrupted.")
        var watch = false

        @OptionGroup var server: ServerOptions

        func validate() throws {
            if library.path != nil {
                if server.server != nil { throw ValidationError("--db and --server are alternatives; give one") }
                if events != nil { throw ValidationError("--events follows a server's scan; --db scans here") }
                if maxSongBytes < 1 { throw ValidationError("--max-song-bytes must be at least 1") }
                if let nesting = Serve.nesting(libraryRoots) { throw ValidationError(nesting) }
            } else if !libraryRoots.isEmpty {
                throw ValidationError("--library-root goes with --db; a server scans the roots it was started with")
            } else if watch {
                throw ValidationError("--watch goes with --db; a server watches its roots with `tactus serve --watch`")
            }
        }

        func run() throws {
            let absolute = paths.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
            if let path = library.path { return try scanHere(path, absolute) }
            try report(try scanOnServer(absolute), here: false)
        }

        private func report(_ summary: ScanSummary, here: Bool) throws {
            if json {
                try Output.jsonLine(summary)
            } else {
                Self.printSummary(summary, here: here)
            }
            fflush(nil)  // a watching scan prints each summary as it comes, to a pipe too
        }

        private func scanOnServer(_ absolute: [String]) throws -> ScanSummary {
            if !json {
                printError("scanning \(absolute.isEmpty ? "every library root" : absolute.joined(separator: ", "))...")
            }
            let endpoint = events ?? CoordinatorEndpoints.events(forFrontend: server.endpoint)
            let progress = try endpoint.flatMap { isatty(STDERR_FILENO) == 1 ? try ScanProgressLine(events: $0, curve: server.curve.keys()) : nil }
            return try reportingFailures {
                defer { progress?.stop() }
                return try server.client().scan(
                    ScanRequest(paths: absolute.isEmpty ? nil : absolute), wait: .milliseconds(Int64(wait * 1000)))
            }
        }

        /// `--db`: the scan run in this process, on the library file `path`; with `--watch`, then
        /// one scan of each change, until interrupted.
        private func scanHere(_ path: String, _ absolute: [String]) throws {
            let library = try LibraryOptions.open(path, .create)
            let roots = try reportingFailures {
                let roots = libraryRoots.isEmpty ? try library.locationRoots() : libraryRoots
                guard !roots.isEmpty else {
                    throw CommandFailure("\(path) records no library root yet: give the folder to scan with --library-root DIR")
                }
                return roots
            }
            if !json {
                printError("scanning \(absolute.isEmpty ? roots.joined(separator: ", ") : absolute.joined(separator: ", "))...")
            }
            let scan = DatabaseScan(
                library: library, roots: LibraryRoots(roots), detectors: try DetectorChoice(names: [], parameters: []).detectors,
                maxSongBytes: maxSongBytes)
            if watch {
                // Ends on SIGINT or SIGTERM (the default action), even when started with them
                // blocked (a child inherits its parent thread's signal mask).
                var interrupting = sigset_t()
                sigemptyset(&interrupting)
                sigaddset(&interrupting, SIGINT)
                sigaddset(&interrupting, SIGTERM)
                pthread_sigmask(SIG_UNBLOCK, &interrupting, nil)
            }
            // Watching starts before the first scan, so nothing changed during it is missed.
            let changes = WatchedChanges()
            let watcher = try watch ? reportingFailures {
                try LibraryWatcher(roots: roots, logger: Logger(label: "tactus.scan")) { changes.add($0) }
            } : nil
            defer { watcher?.stop() }
            try report(try run(scan, paths: absolute), here: true)
            while watcher != nil {
                // A scan of what changed that fails (a folder swapped for a link meanwhile) is
                // told, and the watching goes on.
                do {
                    try report(try run(scan, paths: changes.next()), here: true)
                } catch {
                    printError("Error: \(error)")
                }
            }
        }

        /// One `--db` scan of `paths` (every root when empty), its progress drawn on standard
        /// error when that is a terminal.
        private func run(_ scan: DatabaseScan, paths: [String]) throws -> ScanSummary {
            let drawsProgress = isatty(STDERR_FILENO) == 1
            var drawn = false
            defer { if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) } }
            return try reportingFailures {
                try scan.run(paths: paths) { progress in
                    guard drawsProgress else { return }
                    FileHandle.standardError.write(Data(("\r\u{1B}[K" + ScanProgressLine.text(progress)).utf8))
                    drawn = true
                }
            }
        }

        /// The summary as text; `here`: the scan analysed the songs itself (`--db`).
        static func printSummary(_ summary: ScanSummary, here: Bool = false) {
            let work = here
                ? "\(summary.queuedJobs) analyses run, \(summary.failed?.count ?? 0) songs failed"
                : "\(summary.queuedJobs) jobs queued" + (summary.hashedByWorkers.map { " (\($0) files hashed by the workers)" } ?? "")
            print(
                "\(summary.files) files in \(String(format: "%.1f", summary.seconds)) s: \(summary.new) new, \(summary.changed) changed, "
                    + "\(summary.moved) moved, \(summary.missing) missing, \(summary.unchanged) unchanged, \(summary.copies) copies, "
                    + "\(summary.skippedTotal) skipped; \(work)")
            if !summary.skipped.isEmpty {
                Output.table(["skipped", "reason"], summary.skipped.map { [$0.path, $0.reason] })
                if summary.skippedTotal > summary.skipped.count {
                    print("(the first \(summary.skipped.count) of the \(summary.skippedTotal) skipped files)")
                }
            }
            if let failed = summary.failed, !failed.isEmpty {
                Output.table(["failed", "reason"], failed.map { [$0.path, $0.reason] })
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

                With --db DATA/library.sqlite, no server is involved: the blobs of that data directory \
                (DATA/blobs) are pruned against the jobs that library file records as queued or running. Use \
                it on the data directory of a server that is stopped; a running server's is pruned by asking it.
                """
        )

        @Flag(help: "Only count what would be removed.")
        var dryRun = false

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var library: LibraryOptions

        @OptionGroup var server: ServerOptions

        func validate() throws {
            if library.path != nil && server.server != nil { throw ValidationError("--db and --server are alternatives; give one") }
        }

        func run() throws {
            let summary = try reportingFailures {
                guard let path = library.path else { return try server.client().prune(PruneRequest(dryRun: dryRun ? true : nil)) }
                let library = try LibraryOptions.open(path, dryRun ? .readOnly : .existing)
                let directory = ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("blobs")
                guard FileManager.default.fileExists(atPath: directory) else {
                    return PruneSummary(removed: 0, removedBytes: 0, kept: 0, dryRun: dryRun)
                }
                return try library.prune(try SongBlobs(root: directory), dryRun: dryRun)
            }
            if json {
                try Output.jsonLine(summary)
            } else {
                let verb = summary.dryRun ? "would remove" : "removed"
                print("\(verb) \(summary.removed) song blobs (\(summary.removedBytes) bytes); kept \(summary.kept) that queued or running jobs need")
            }
        }
    }
}

/// The paths a ``LibraryWatcher`` reported changed, gathered until `tactus scan --db --watch`
/// takes them for its next scan.
final class WatchedChanges: Sendable {
    private enum Waiting {
        case nothing
        case paths(Set<String>)
        case everything
    }

    private let waiting = Mutex<Waiting>(.nothing)
    private let arrived = DispatchSemaphore(value: 0)

    /// Adds `paths` (nil: every root); called on the watcher's thread.
    func add(_ paths: [String]?) {
        waiting.withLock { waiting in
            switch (waiting, paths) {
            case (.everything, _), (_, nil): waiting = .everything
            case (.nothing, let paths?): waiting = .paths(Set(paths))
            case (.paths(let gathered), let paths?): waiting = .paths(gathered.union(paths))
            }
        }
        arrived.signal()
    }

    /// Waits for changes and takes them: the paths, sorted, or none for every root.
    func next() -> [String] {
        while true {
            arrived.wait()
            let taken: [String]? = waiting.withLock { waiting in
                defer { waiting = .nothing }
                switch waiting {
                case .nothing: return nil
                case .paths(let paths): return paths.sorted()
                case .everything: return []
                }
            }
            if let taken { return taken }
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
                FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.text(progress)).utf8))
                drawn = true
            }
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            context.shutdown()
        }
        thread.start()
    }

    /// The line for a scan's progress so far.
    static func text(_ progress: ScanSummary) -> String {
        "scanning  \(progress.looked ?? 0)/\(progress.files) files: \(progress.new) new, \(progress.changed) changed, "
            + "\(progress.unchanged) unchanged, \(progress.skippedTotal) skipped"
    }

    /// Stops following and erases the line.
    func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        finished.wait()
    }
}
