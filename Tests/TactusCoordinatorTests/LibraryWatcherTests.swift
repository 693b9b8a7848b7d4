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

    /// Every path handed over so far (nil, a scan of every root, left out).
    static func paths(_ handed: borrowing Mutex<[[String]?]>) -> [String] {
        handed.withLock { $0.compactMap { $0 }.flatMap { $0 } }
    }

    /// A root renamed away and made again is watched again: the new folder is watched and
    /// scanned whole (what the library held there is then found missing), and a file written in
    /// it is handed over; the renamed-away folder is no longer watched (`mv Music Music.old;
    /// mkdir Music` left the watcher blind: attack round 8, M3).
    @Test func aRootRenamedAwayAndMadeAgainIsWatchedAgain() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch-root")
        let root = directory.file("music"), old = directory.file("music.old")
        try FileManager.default.createDirectory(atPath: root + "/album", withIntermediateDirectories: true)
        let handed = Mutex<[[String]?]>([])
        let watcher = try LibraryWatcher(roots: [root], logger: Self.quiet, settle: .milliseconds(50)) { paths in
            handed.withLock { $0.append(paths) }
        }
        defer { watcher.stop() }
        #expect(rename(root, old) == 0)
        try Wait.until("the root's watches removed") { watcher.watchedCount == 0 }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try Wait.until("a scan of the root made again") { Self.paths(handed).contains(root) }
        #expect(FileManager.default.createFile(atPath: old + "/album/in-old.mp3", contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: root + "/after.mp3", contents: Data([1])))
        try Wait.until("the file written in the root made again") { Self.paths(handed).contains(root + "/after.mp3") }
        #expect(!Self.paths(handed).contains { $0.contains("in-old.mp3") }, "\(Self.paths(handed))")
    }

    /// A folder moved out of the root loses its watches (and those below it): what changes in
    /// it afterwards is not taken for a change in the root, and its watches do not pile up
    /// (20,000 folders moved out kept 19,835 watches: attack round 8, L2). A folder moved
    /// within the root is still watched at its new path.
    @Test func aFolderMovedOutOfTheRootIsNoLongerWatched() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch-moved")
        let root = directory.file("music"), outside = directory.file("outside")
        for path in [root + "/gone/disc 1", root + "/kept/disc 1", outside] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let handed = Mutex<[[String]?]>([])
        let watcher = try LibraryWatcher(roots: [root], logger: Self.quiet, settle: .milliseconds(50)) { paths in
            handed.withLock { $0.append(paths) }
        }
        defer { watcher.stop() }
        #expect(rename(root + "/gone", outside + "/gone") == 0)
        #expect(rename(root + "/kept", root + "/moved") == 0)
        try Wait.until("the moves handed over") { Self.paths(handed).contains(root + "/gone") && Self.paths(handed).contains(root + "/moved") }
        #expect(FileManager.default.createFile(atPath: outside + "/gone/disc 1/x.mp3", contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: root + "/moved/disc 1/y.mp3", contents: Data([1])))
        try Wait.until("the file in the folder moved within the root") { Self.paths(handed).contains(root + "/moved/disc 1/y.mp3") }
        #expect(!Self.paths(handed).contains { $0.hasSuffix("x.mp3") }, "\(Self.paths(handed))")
        #expect(watcher.watchedCount == 3, "the root, moved and moved/disc 1")
    }

    /// A folder renamed over an empty one keeps its watches at its new path when the replaced
    /// folder's deletion is told after it: the stale watch goes alone, not every watch at that
    /// path (the review of round 8's mends).
    @Test func aFolderRenamedOverAnotherKeepsItsWatch() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-watch-over")
        let root = directory.file("music")
        for path in [root + "/a/disc 1", root + "/b"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let handed = Mutex<[[String]?]>([])
        let watcher = try LibraryWatcher(roots: [root], logger: Self.quiet, settle: .milliseconds(50)) { paths in
            handed.withLock { $0.append(paths) }
        }
        defer { watcher.stop() }
        #expect(watcher.watchedCount == 4)
        #expect(rename(root + "/a", root + "/b") == 0)
        try Wait.until("the rename handed over") { Self.paths(handed).contains(root + "/b") }
        try Wait.until("the replaced folder's watch removed") { watcher.watchedCount == 3 }
        #expect(FileManager.default.createFile(atPath: root + "/b/disc 1/x.mp3", contents: Data([1])))
        try Wait.until("the file in the folder renamed over the other") { Self.paths(handed).contains(root + "/b/disc 1/x.mp3") }
    }
}
