import Foundation
import Logging
import Synchronization
import TactusLibraryRoots
import TactusLibraryService
import TactusProtocol
import TactusStore
import TactusZMQ

/// A problem that keeps the coordinator from starting.
public struct CoordinatorError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public var description: String { message }
}

/// The endpoints a running coordinator is bound to (with the ports the system chose when the
/// configuration asked for `*`).
public struct BoundEndpoints: Sendable, Hashable, Codable {
    public var frontend: String
    public var backend: String
    public var events: String
    /// The same sockets as Unix sockets in the configuration's
    /// ``CoordinatorConfiguration/localEndpointsDirectory``, for the processes of this host
    /// that `tactus serve` starts; nil without one.
    public var local: LocalEndpoints?

    public init(frontend: String, backend: String, events: String, local: LocalEndpoints? = nil) {
        self.frontend = frontend
        self.backend = backend
        self.events = events
        self.local = local
    }

    /// The three sockets' `ipc://` endpoints.
    public struct LocalEndpoints: Sendable, Hashable, Codable {
        public var frontend: String
        public var backend: String
        public var events: String

        /// The names of the three sockets' files in the directory.
        public static let socketNames = (frontend: "frontend", backend: "backend", events: "events")

        /// The endpoints of the sockets bound in `directory`.
        init(directory: String) {
            frontend = "ipc://" + directory + "/" + Self.socketNames.frontend
            backend = "ipc://" + directory + "/" + Self.socketNames.backend
            events = "ipc://" + directory + "/" + Self.socketNames.events
        }
    }
}

/// The coordinator: receives clients' requests, keeps the durable job queue, dispatches jobs
/// to workers, records their results in the library and publishes events.
///
/// One thread runs ``run(onReady:)``: a single poll loop that owns every socket (the
/// ZeroMQ Guide's Majordomo broker shape). Other threads may only call ``stop()``,
/// ``reloadAuthorizedKeys()``, ``workerProcessStarted(workerID:)`` and
/// ``workerProcessEnded(workerID:reason:)``.
///
/// ```swift
/// let coordinator = try Coordinator(configuration: configuration, probe: AudioProbe(), logger: logger)
/// try coordinator.run { endpoints in print("listening on \(endpoints.frontend)") }
/// ```
public final class Coordinator: Sendable {
    public let configuration: CoordinatorConfiguration
    /// The library the coordinator writes (the only writer).
    public let library: Library
    let blobs: SongBlobs
    /// The blob directory as resolved (`realpath`): a worker on this host that declares it
    /// among its `roots` (serve's local workers do) opens an upload's blob itself.
    public let blobRoot: String
    /// The library roots, resolved once when the coordinator is made and kept: every scan,
    /// submission by path, tag request and render opens files through them, so a root replaced
    /// by a symbolic link while the server runs is refused, not followed.
    public let libraryRoots: LibraryRoots
    /// Reads the header of each submitted song.
    let probe: any SongProbe
    /// Renders songs for `stretch` requests; nil: the server does not render.
    let renderer: (any SongRenderer)?
    /// Reads and writes tags for `tags` requests; nil: the server does not.
    let tagger: (any SongTagger)?
    /// Finds the cadence of recordings for `cadence` requests; nil: the server does not.
    let recordings: (any RecordingAnalyzer)?
    let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let reloadRequested = Atomic<Bool>(false)
    private let endedWorkers = Mutex<[(workerID: String, reason: String)]>([])
    /// Paths the library watcher saw change, for the loop's next scan (an empty set after an
    /// overflow: every root); nil when nothing changed.
    private let watchedPaths = Mutex<Set<String>?>(nil)
    /// The workers whose processes are known to run (local workers of `tactus serve`).
    private let watchedWorkers = Mutex<Set<String>>([])

    /// Opens the data directory (creating it), the library and the blob store. `probe` reads
    /// the header of each submitted song; `renderer`, when given, renders songs for `stretch`;
    /// `tagger`, when given, reads and writes the tags of files under the library roots for `tags`;
    /// `recordings`, when given, finds the cadence of recordings for `cadence`.
    ///
    /// Refuses to start when an endpoint is reachable from other machines and the
    /// configuration has no ``CoordinatorConfiguration/security``, unless it allows that
    /// (``CoordinatorConfiguration/allowInsecure``), in which case a warning is logged.
    public init(
        configuration: CoordinatorConfiguration, probe: any SongProbe, renderer: (any SongRenderer)? = nil,
        tagger: (any SongTagger)? = nil, recordings: (any RecordingAnalyzer)? = nil, logger: Logger
    ) throws {
        self.configuration = configuration
        self.probe = probe
        self.renderer = renderer
        self.tagger = tagger
        self.recordings = recordings
        self.logger = logger
        let exposed = configuration.exposedEndpoints
        if configuration.security == nil && !exposed.isEmpty {
            guard configuration.allowInsecure else {
                throw CoordinatorError(
                    message: "refusing to listen on \(exposed.joined(separator: ", ")) without CURVE: anyone who can reach "
                        + "it could submit songs and read the library. Use --curve-secret-key FILE --authorized-clients DIR "
                        + "(see `tactus keys generate`), bind to 127.0.0.1, or pass --insecure to accept the risk")
            }
            logger.warning(
                "INSECURE: listening beyond loopback without CURVE: anyone who can reach these endpoints can use the server",
                metadata: ["endpoints": "\(exposed.joined(separator: ", "))"])
        }
        do {
            try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw CoordinatorError(message: "\(configuration.dataDirectory): cannot create the data directory: \(error)")
        }
        // The loop's commits never checkpoint (with its fsyncs): a thread of run() does.
        library = try Library(
            path: configuration.libraryPath,
            options: .init(
                durability: configuration.durability, busyTimeout: configuration.databaseBusyTimeoutS, automaticCheckpoints: false,
                advisoryDetectors: Set(configuration.knownDetectors.filter(\.advisory).map(\.name)), exclusiveWriter: true))
        blobs = try SongBlobs(root: configuration.blobDirectory, syncsToDisk: configuration.durability == .powerLoss)
        blobRoot = LibraryRoots([configuration.blobDirectory]).directories[0]
        libraryRoots = LibraryRoots(configuration.libraryRoots)
        // Renders are forgotten when the coordinator stops: their files with them.
        try? FileManager.default.removeItem(atPath: configuration.renderDirectory)
    }

    /// Copies the library's write-ahead log into its file every second on a thread of its own
    /// (passive checkpoints), so that the loop's commits never wait for the disk.
    private func startCheckpoints() -> PeriodicTask {
        PeriodicTask(name: "tactus-checkpoint", interval: 1) { [library, logger] in
            do {
                try library.checkpointInBackground()
            } catch {
                logger.warning("cannot checkpoint the library", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Asks the running loop to stop: it stops accepting submissions, lets running jobs
    /// finish for the grace period, checkpoints the library and returns.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// Asks the running loop to read the authorized keys directory again (for `SIGHUP`).
    /// Thread-safe; does nothing without CURVE.
    public func reloadAuthorizedKeys() {
        reloadRequested.store(true, ordering: .sequentiallyConsistent)
    }

    /// True once per ``reloadAuthorizedKeys()``.
    func takeReloadRequest() -> Bool {
        reloadRequested.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// Tells the running loop that the process of the worker named `workerID` has ended
    /// (`tactus serve` saw one of its local workers exit), so that the job it held is
    /// requeued, or failed after its last attempt, at once rather than when the worker's
    /// silence expires. `reason` says how the process ended, in the words of the job's
    /// failure message (`was killed by signal 6 (SIGABRT)...`). Thread-safe; a worker the
    /// coordinator does not know (any more) is ignored.
    public func workerProcessEnded(workerID: String, reason: String) {
        _ = watchedWorkers.withLock { $0.remove(workerID) }
        endedWorkers.withLock { $0.append((workerID, reason)) }
    }

    /// Tells the coordinator that the process of the worker named `workerID` runs and that
    /// its end will be reported (``workerProcessEnded(workerID:reason:)``): while it holds a
    /// job within the job's time limit, that worker is not taken for dead when its heartbeats
    /// are late (a machine under heavy load may delay them by seconds), since the coordinator
    /// hears at once if the process ends. Thread-safe.
    public func workerProcessStarted(workerID: String) {
        _ = watchedWorkers.withLock { $0.insert(workerID) }
    }

    /// Whether the process of worker `workerID` is known to run.
    func isWorkerProcessRunning(_ workerID: String) -> Bool {
        watchedWorkers.withLock { $0.contains(workerID) }
    }

    /// The workers reported ended since the last call.
    func takeEndedWorkers() -> [(workerID: String, reason: String)] {
        endedWorkers.withLock { ended in
            defer { ended.removeAll() }
            return ended
        }
    }

    /// Asks the running loop to scan `paths` below the library roots (nil: every root; more than
    /// ``LibraryWatcher/maximumPaths`` waiting are every root too).
    /// Thread-safe: the library watcher calls it.
    public func scanChanged(_ paths: [String]?) {
        guard paths?.isEmpty != true else { return }
        watchedPaths.withLock { waiting in waiting = LibraryWatcher.union(waiting ?? Set(paths ?? []), paths) }
    }

    /// The paths reported changed since the last call (empty: every root), or nil.
    func takeWatchedPaths() -> [String]? {
        watchedPaths.withLock { waiting in
            defer { waiting = nil }
            return waiting.map { Array($0).sorted() }
        }
    }

    /// Binds the sockets, recovers the queue and serves until ``stop()``. `onReady` is called
    /// once the sockets are bound, with their endpoints. When it returns, the library's writer
    /// lock is given up (``TactusStore/Library/endWriting()``): a coordinator runs once.
    public func run(onReady: (BoundEndpoints) -> Void = { _ in }) throws {
        // Last (defers run in reverse): the library is no longer written once this returns.
        defer { library.endWriting() }
        let context = try ZMQContext(socketLinger: .milliseconds(500))
        defer { context.shutdown() }
        let loop = try CoordinatorLoop(coordinator: self, context: context)
        let checkpoints = startCheckpoints()
        onReady(loop.endpoints)
        try loop.serve()
        checkpoints.stop()
        try library.checkpoint()
        logger.info("coordinator stopped")
    }
}
