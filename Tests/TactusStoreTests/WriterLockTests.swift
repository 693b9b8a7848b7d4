import Foundation
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// One writer at a time (``Library/Options/exclusiveWriter``): the coordinator and the commands
/// given `--db` that write. Two `Library` values in one process hold separate `flock`s, so the
/// refusal is tested here as it happens between processes.
@Suite struct WriterLockTests {
    @Test func aSecondWriterIsRefusedUntilTheFirstCloses() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-writer-lock")
        let path = directory.file("library.sqlite")
        var first: Library? = try Library(path: path, options: Library.Options(exclusiveWriter: true))
        #expect(throws: StoreError.inUse(path: path)) {
            try Library(path: path, options: Library.Options(exclusiveWriter: true))
        }
        #expect(StoreError.inUse(path: path).description.contains("in use by another writer"))
        // Readers are not writers: they open while the writer has the library.
        let reader = try Library(path: path, options: Library.Options(mode: .readOnly))
        #expect(try reader.query(TempoQuery(range: 20...400)).isEmpty)
        #expect(first != nil)
        first = nil
        _ = try Library(path: path, options: Library.Options(exclusiveWriter: true))
    }

    /// A writer that is done gives the lock up while the library is still referenced (a
    /// stopped coordinator whose threads are ending), and giving it up twice is harmless.
    @Test func aWriterThatEndsWritingLetsTheNextOneIn() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-writer-lock-end")
        let path = directory.file("library.sqlite")
        let first = try Library(path: path, options: Library.Options(exclusiveWriter: true))
        first.endWriting()
        first.endWriting()
        let second = try Library(path: path, options: Library.Options(exclusiveWriter: true))
        #expect(throws: StoreError.inUse(path: path)) {
            try Library(path: path, options: Library.Options(exclusiveWriter: true))
        }
        withExtendedLifetime(first) {}
        withExtendedLifetime(second) {}
    }

    @Test func theLockFileIsNeverReachedThroughASymbolicLink() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-writer-lock-link")
        let path = directory.file("library.sqlite")
        let elsewhere = directory.file("elsewhere")
        try FileManager.default.createSymbolicLink(atPath: WriterLock.path(of: path), withDestinationPath: elsewhere)
        do {
            _ = try Library(path: path, options: Library.Options(exclusiveWriter: true))
            Issue.record("a library whose lock file is a link was opened")
        } catch {
            guard case .cannotOpen(let failed, let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(failed == path && reason.contains("lock file"), "\(reason)")
        }
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
    }
}
