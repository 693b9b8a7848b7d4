import Foundation
import Logging
import Synchronization
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

    public init(frontend: String, backend: String, events: String) {
        self.frontend = frontend
        self.backend = backend
        self.events = events
    }
}

/// The coordinator: receives clients' requests, keeps the durable job queue, dispatches jobs
/// to workers, records their results in the library and publishes events.
///
/// One thread runs ``run(onReady:)``: a single poll loop that owns every socket (the
/// ZeroMQ Guide's Majordomo broker shape). Other threads may only call ``stop()``.
///
/// ```swift
/// let coordinator = try Coordinator(configuration: configuration, logger: logger)
/// try coordinator.run { endpoints in print("listening on \(endpoints.frontend)") }
/// ```
public final class Coordinator: Sendable {
    public let configuration: CoordinatorConfiguration
    /// The library the coordinator writes (the only writer).
    public let library: Library
    let blobs: BlobStore
    let logger: Logger
    private let stopRequested = Atomic<Bool>(false)

    /// Opens the data directory (creating it), the library and the blob store.
    public init(configuration: CoordinatorConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw CoordinatorError(message: "\(configuration.dataDirectory): cannot create the data directory: \(error)")
        }
        library = try Library(path: configuration.libraryPath, options: .init(busyTimeout: configuration.databaseBusyTimeoutS))
        blobs = try BlobStore(root: configuration.blobDirectory)
    }

    /// Asks the running loop to stop: it stops accepting submissions, lets running jobs
    /// finish for the grace period, checkpoints the library and returns.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// Binds the sockets, recovers the queue and serves until ``stop()``. `onReady` is called
    /// once the sockets are bound, with their endpoints.
    public func run(onReady: (BoundEndpoints) -> Void = { _ in }) throws {
        let context = try ZMQContext(socketLinger: .milliseconds(500))
        defer { context.shutdown() }
        let loop = try CoordinatorLoop(coordinator: self, context: context)
        onReady(loop.endpoints)
        try loop.serve()
        try library.checkpoint()
        logger.info("coordinator stopped")
    }
}
