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
}
