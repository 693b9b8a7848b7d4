import Foundation
import Logging
import Synchronization
import TactusTestSupport
import Testing

@testable import TactusCoordinator

/// The watcher of the library roots opens each directory from its root without following a
/// link: a folder swapped for a link to a large tree between its creation and its watch (a local
/// user made the coordinator watch 15,533 directories of /usr, attack round 5, L2) is not watched.
@Suite struct LibraryWatcherTests {
    @Test func aFolderSwappedForALinkIsNotWatchedNorWhatIsBelowIt() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch")
        let root = directory.file("music"), outside = directory.file("outside")
        for path in [root + "/album", root + "/late/disc 1", outside + "/a/b", outside + "/c"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        // Made before the watcher starts, so that no event reaches its thread meanwhile.
        try FileManager.default.createSymbolicLink(atPath: root + "/new", withDestinationPath: outside)
        var logger = Logger(label: "test.watch")
        logger.logLevel = .critical
        let watcher = try LibraryWatcher(roots: [root], logger: logger) { _ in }
        defer { watcher.stop() }
        #expect(watcher.watchedCount == 4, "the root, album, late and disc 1; not the link")
        // What the watcher does on IN_CREATE of "new/a" once "new" is a link to elsewhere.
        watcher.watchTree(root + "/new", depth: 1)
        watcher.watchTree(root + "/new/a", depth: 2)
        #expect(watcher.watchedCount == 4, "nothing through the link")
    }

    /// A logger that says nothing below critical.
    static var quiet: Logger {
        var logger = Logger(label: "test.watch")
        logger.logLevel = .critical
        return logger
    }

    /// A library root `music` in `directory` with an empty folder `flood`; its path.
    static func rootWithAFloodFolder(in directory: TemporaryDirectory) throws -> String {
        let root = directory.file("music")
        try FileManager.default.createDirectory(atPath: root + "/flood", withIntermediateDirectories: true)
        return root
    }

    /// More files changed at once than the watcher keeps (``LibraryWatcher/maximumPaths``; 100
    /// here, so that the files are made well within one hand-over) are handed over as a scan of
    /// every root, never as a list of their names: a local user creating files with long unique
    /// names as fast as possible took the coordinator to 2.4 GB (attack round 7, H1).
    @Test func moreChangesThanTheWatcherKeepsBecomeAScanOfEveryRoot() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch-flood")
        let root = try Self.rootWithAFloodFolder(in: directory)
        let handed = Mutex<[[String]?]>([])
        let watcher = try LibraryWatcher(roots: [root], logger: Self.quiet, pathLimit: 100) { paths in handed.withLock { $0.append(paths) } }
        defer { watcher.stop() }
        let name = String(repeating: "n", count: 200)
        for index in 0..<600 {
            #expect(FileManager.default.createFile(atPath: root + "/flood/\(name)-\(index)", contents: Data([1])))
        }
        try Wait.until("a scan of every root") { handed.withLock { $0.contains { $0 == nil } } }
        #expect(handed.withLock { $0.allSatisfy { ($0?.count ?? 0) <= 100 } })
    }

    /// Scans of every root are asked for at most once every
    /// ``LibraryWatcher/everythingInterval`` (2 s here): a flood of changes that never stops must
    /// not keep every root scanned back to back; the scan it delays still comes.
    @Test func scansOfEveryRootAreAskedForAtMostOnceAnInterval() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch-interval")
        let root = try Self.rootWithAFloodFolder(in: directory)
        let everyRoot = Mutex<[ContinuousClock.Instant]>([])
        let watcher = try LibraryWatcher(roots: [root], logger: Self.quiet, pathLimit: 10, everythingInterval: .seconds(2)) { paths in
            if paths == nil { everyRoot.withLock { $0.append(.now) } }
        }
        defer { watcher.stop() }
        for round in 0..<2 {
            for index in 0..<50 {
                #expect(FileManager.default.createFile(atPath: root + "/flood/\(round)-\(index)", contents: Data([1])))
            }
            try Wait.until("scan \(round + 1) of every root") { everyRoot.withLock { $0.count > round } }
        }
        let times = everyRoot.withLock { $0 }
        #expect(times.count == 2 && times[1] - times[0] >= .seconds(2), "\(times)")
    }
}
