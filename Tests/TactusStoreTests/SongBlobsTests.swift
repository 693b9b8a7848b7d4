import Foundation
import TactusModel
import TactusStore
import TactusTestSupport
import Testing

/// The blob store's files: what a put leaves, and what prune removes.
@Suite struct SongBlobsTests {
    /// Several puts linking one upload's file at once (a `submit` sent twice): the blob, and no
    /// partial file left over (rename does nothing when both names are links to one file).
    @Test func putsLinkingOneFileAtOnceLeaveOnlyTheBlob() throws {
        let directory = try TemporaryDirectory()
        let blobs = try SongBlobs(root: directory.file("blobs"), syncsToDisk: false)
        for index in 0..<40 {
            let bytes = Array("song \(index)".utf8) + [UInt8](repeating: UInt8(index), count: 4096)
            let upload = directory.file("upload-\(index)")
            #expect(FileManager.default.createFile(atPath: upload, contents: Data(bytes)))
            let id = SongID(hashing: bytes)
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                #expect(throws: Never.self) { try blobs.put(linking: upload, size: bytes.count, id: id) }
            }
            #expect(try blobs.read(id) == bytes)
        }
        let left = try FileManager.default.subpathsOfDirectory(atPath: blobs.root).filter { $0.hasSuffix(".partial") }
        #expect(left.isEmpty, "partial files left: \(left.prefix(3))")
    }

    /// A blob's folder is made by the first put into it, by bytes or by link, and again when
    /// it was removed meanwhile; a put into a folder that exists does not need to make it.
    @Test func aBlobsFolderIsMadeWhenMissing() throws {
        let directory = try TemporaryDirectory()
        let blobs = try SongBlobs(root: directory.file("blobs"), syncsToDisk: false)
        let bytes = Array("a song's bytes".utf8)
        let id = SongID(hashing: bytes)
        let folder = "\(blobs.root)/\(id.hex.prefix(2))"
        for round in 0..<2 {
            #expect(!FileManager.default.fileExists(atPath: folder))
            try blobs.put(bytes, id: id)
            #expect(try blobs.read(id) == bytes)
            try FileManager.default.removeItem(atPath: folder)
            let upload = directory.file("upload-\(round)")
            #expect(FileManager.default.createFile(atPath: upload, contents: Data(bytes)))
            try blobs.put(linking: upload, size: bytes.count, id: id)
            #expect(try blobs.read(id) == bytes)
            let other = Array("another song \(round)".utf8)
            let otherID = SongID(hashing: other + bytes)
            try blobs.put(other + bytes, id: otherID)
            #expect(try blobs.read(otherID) == other + bytes)
            try FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.removeItem(atPath: "\(blobs.root)/\(otherID.hex.prefix(2))")
        }
    }

    /// An upload's file on another file system than the blobs (`/dev/shm`, a tmpfs) cannot be
    /// linked: it is copied (it was refused with "Invalid cross-device link").
    @Test func aFileOnAnotherFileSystemIsCopied() throws {
        let directory = try TemporaryDirectory()
        var shm = stat(), here = stat()
        guard stat("/dev/shm", &shm) == 0, stat(directory.path, &here) == 0, shm.st_dev != here.st_dev else {
            print("skipped: no /dev/shm on another file system than \(directory.path)")
            return
        }
        let blobs = try SongBlobs(root: directory.file("blobs"), syncsToDisk: true)
        let bytes = (0..<((3 << 20) + 17)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let upload = "/dev/shm/tactus-test-upload-\(getpid())-\(UInt32.random(in: .min ... .max))"
        #expect(FileManager.default.createFile(atPath: upload, contents: Data(bytes)))
        defer { unlink(upload) }
        let id = SongID(hashing: bytes)
        try blobs.put(linking: upload, size: bytes.count, id: id)
        #expect(try blobs.read(id) == bytes)
        let left = try FileManager.default.subpathsOfDirectory(atPath: blobs.root).filter { $0.hasSuffix(".partial") }
        #expect(left.isEmpty, "partial files left: \(left)")
    }

    /// Prune removes the partial files a crash left (over an hour old) and keeps a recent one (a
    /// put in progress), counting what it removed.
    @Test func pruneRemovesAbandonedPartialFiles() throws {
        let directory = try TemporaryDirectory()
        let blobs = try SongBlobs(root: directory.file("blobs"), syncsToDisk: false)
        let id = SongID(hashing: Array("kept".utf8))
        try blobs.put(Array("kept".utf8), id: id)
        let folder = "\(blobs.root)/\(id.hex.prefix(2))"
        let abandoned = "\(folder)/.\(id).1.partial"
        let recent = "\(folder)/.\(id).2.partial"
        #expect(FileManager.default.createFile(atPath: abandoned, contents: Data(count: 1000)))
        #expect(FileManager.default.createFile(atPath: recent, contents: Data(count: 10)))
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-2 * SongBlobs.abandonedPartialAge)], ofItemAtPath: abandoned)

        let counted = blobs.prune(keeping: [id], dryRun: true)
        #expect(counted.removed == 1 && counted.bytes == 1000 && counted.kept == 1)
        #expect(FileManager.default.fileExists(atPath: abandoned))
        let pruned = blobs.prune(keeping: [id])
        #expect(pruned.removed == 1 && pruned.bytes == 1000 && pruned.kept == 1)
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(FileManager.default.fileExists(atPath: recent))
        #expect(try blobs.read(id) == Array("kept".utf8))
    }
}
