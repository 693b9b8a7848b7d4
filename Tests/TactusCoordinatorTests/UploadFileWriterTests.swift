import Foundation
import Logging
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

@testable import TactusCoordinator

/// An upload's file as ``UploadFileWriter`` writes it: the bytes on disk are the chunks',
/// whatever their sizes and where they start, and the whole blocks of a chunk that starts on a
/// block go around the page cache.
@Suite struct UploadFileWriterTests {
    /// Chunks of every kind, in order, around the cache and through it: whole blocks, a chunk
    /// ending between blocks, chunks starting between blocks, a chunk starting on a block again,
    /// chunks too small to go around the cache.
    @Test(arguments: [true, false]) func theFileHoldsTheChunksWhateverTheirSizes(aroundTheCache: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("upload")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        // Ends at 3 MiB + 9,099 bytes; 7,285 bytes more come back to a block, where 300,000 bytes start.
        let sizes = [1 << 20, 1 << 20, 5000, 4096, 3, 1 << 20, 7285, 300_000, 12_288, 1]
        var generator = SystemRandomNumberGenerator()
        let chunks = sizes.map { size in (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20, aroundTheCache: aroundTheCache)
        var offset: Int64 = 0
        for chunk in chunks {
            try writer.write(chunk, to: path, at: offset)
            offset += Int64(chunk.count)
        }
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written.count == chunks.map(\.count).reduce(0, +))
        #expect(written == chunks.flatMap { $0 })
        if aroundTheCache && Self.temporaryFilesTakeDirectWrites {
            #expect(writer.writesAroundTheCache, "the writer turned direct writes off on a file system that takes them")
        }
    }

    /// Four chunks of 1 MiB and an end of 1,000 bytes: the 4 MiB are not in the page cache
    /// once written, the end is.
    @Test(.enabled(if: temporaryFilesTakeDirectWrites, "the temporary directory's file system keeps direct writes in memory or refuses them"))
    func wholeBlocksAreWrittenAroundThePageCache() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("upload")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20)
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        for index in 0..<4 { try writer.write(chunk, to: path, at: Int64(index << 20)) }
        try writer.write([UInt8](repeating: 0xA5, count: 1000), to: path, at: 4 << 20)
        #expect(writer.writesAroundTheCache)

        let resident = try Self.residentPages(of: path)
        let blockPages = (4 << 20) / Int(sysconf(Int32(_SC_PAGESIZE)))
        #expect(resident.count == blockPages + 1)
        #expect(resident.prefix(blockPages).allSatisfy { !$0 }, "the blocks written around the cache are in it")
        #expect(resident.last == true, "the end, written through the cache, is not in it")
    }

    /// Chunks of 64 KiB, each starting on a block: under ``UploadFileWriter/minimumDirectBytes``,
    /// they go through the cache (a direct write would make the poll loop wait for the disk).
    @Test func smallChunksGoThroughTheCache() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("upload")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20)
        let chunk = [UInt8](repeating: 0x33, count: 64 << 10)
        for index in 0..<8 { try writer.write(chunk, to: path, at: Int64(index * chunk.count)) }
        #expect(try Self.residentPages(of: path).allSatisfy { $0 })
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == Array([[UInt8]](repeating: chunk, count: 8).joined()))
    }

    /// A file that is not there: an error naming the problem, nothing created.
    @Test func aMissingFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("gone")
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20)
        #expect {
            try writer.write([UInt8](repeating: 1, count: 1 << 20), to: path, at: 0)
        } throws: { error in
            guard let body = error as? ErrorBody else { return false }
            return body.code == .unavailable && body.message.contains("cannot open the upload's file")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Whether the temporary directory's file system writes `O_DIRECT` around the page cache:
    /// a block written so is not in the cache afterwards (tmpfs takes the flag and keeps the
    /// block in memory all the same).
    static var temporaryFilesTakeDirectWrites: Bool {
        guard let flag = UploadFileWriter.directFlag, let directory = try? TemporaryDirectory() else { return false }
        let path = directory.file("probe")
        let descriptor = open(path, O_WRONLY | O_CREAT | flag, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: UploadFileWriter.alignment)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 7)
        guard pwrite(descriptor, block.baseAddress!, block.count, 0) == block.count else { return false }
        return (try? residentPages(of: path))?.allSatisfy { !$0 } ?? false
    }

    /// For each page of the file at `path`, whether it is in the page cache (`mincore` of a
    /// mapping of the whole file).
    static func residentPages(of path: String) throws -> [Bool] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0 else { throw POSIXError(.EINVAL) }
        let size = Int(status.st_size)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        defer { munmap(mapping, size) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var resident = [UInt8](repeating: 0, count: (size + page - 1) / page)
        guard mincore(mapping, size, &resident) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return resident.map { $0 & 1 == 1 }
    }
}

/// The upload book while a chunk is being written on the upload thread: the upload takes no
/// other chunk and no `submit` until the write is reported, and is not forgotten meanwhile.
@Suite struct UploadBookWritingTests {
    @Test func anUploadWaitsForItsChunkToBeWritten() throws {
        let directory = try TemporaryDirectory()
        var book = try UploadBook(directory: directory.file("uploads"), maxOpenBytes: 1 << 30, logger: Logger(label: "test"))
        let song = [UInt8](repeating: 0x42, count: (1 << 20) + 10)
        let begun = try book.begin(size: Int64(song.count), sha256: SongID(hashing: song), client: "a", maxSongBytes: 1 << 30)
        guard case .write(let first) = try book.append(Array(song.prefix(1 << 20)), to: begun.upload, offset: 0, client: "a") else {
            Issue.record("the first chunk was not to be written")
            return
        }
        // Another chunk, the same chunk again, or the submit, while it is being written: wait.
        for attempt in [{ try book.append(Array(song.suffix(10)), to: begun.upload, offset: 1 << 20, client: "a") },
                        { try book.append(Array(song.prefix(1 << 20)), to: begun.upload, offset: 0, client: "a") }] {
            #expect { _ = try attempt() } throws: { ($0 as? ErrorBody)?.code == .busy }
        }
        #expect { _ = try book.finished(begun.upload, client: "a") } throws: { ($0 as? ErrorBody)?.code == .busy }
        book.expire(at: .now + UploadBook.idleLimit * 2)
        #expect(book.uploads[begun.upload] != nil, "an upload being written was forgotten")

        let status = try book.written(first, first.perform(with: book.writer))
        #expect(status.received == 1 << 20)
        // The same chunk sent again is answered without a write; the last one is written.
        guard case .answered(let again) = try book.append(Array(song.prefix(1 << 20)), to: begun.upload, offset: 0, client: "a") else {
            Issue.record("the chunk sent again was to be written twice")
            return
        }
        #expect(again.received == 1 << 20)
        guard case .write(let last) = try book.append(Array(song.suffix(10)), to: begun.upload, offset: 1 << 20, client: "a") else {
            Issue.record("the last chunk was not to be written")
            return
        }
        _ = try book.written(last, last.perform(with: book.writer))
        let finished = try book.finished(begun.upload, client: "a")
        #expect(finished.digest.song == SongID(hashing: song))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: finished.path))) == song)
    }

    /// An upload fed a byte now and then is forgotten once 120 s pass without a chunk's worth
    /// of bytes (tiny chunks used to keep it, and its place among the uploads open, for ever);
    /// one whose last chunk came within 120 s of a full chunk is kept.
    @Test func anUploadKeptAliveByTinyChunksIsForgotten() throws {
        let directory = try TemporaryDirectory()
        var book = try UploadBook(directory: directory.file("uploads"), maxOpenBytes: 1 << 30, logger: Logger(label: "test"))
        let begun = ContinuousClock.now
        var ids: [String] = []
        for (index, first) in [1, 1 << 20].enumerated() {
            let upload = try book.begin(
                size: 10 << 20, sha256: SongID(hashing: [UInt8(index)]), client: "a", maxSongBytes: 1 << 30, at: begun)
            ids.append(upload.upload)
            guard case .write(let chunk) = try book.append([UInt8](repeating: 1, count: first), to: upload.upload, offset: 0, client: "a")
            else {
                Issue.record("the chunk was not to be written")
                return
            }
            // Its chunk came 100 s after it began (a byte every 100 s, say).
            _ = try book.written(chunk, chunk.perform(with: book.writer), at: begun + .seconds(100))
        }
        book.expire(at: begun + .seconds(125))
        #expect(book.uploads[ids[0]] == nil, "an upload of one byte in 125 s was kept")
        #expect(book.uploads[ids[1]] != nil, "an upload that gained a chunk was forgotten")
    }

    /// A write that failed leaves the upload where it was: the chunk may be sent again.
    @Test func aFailedWriteCanBeSentAgain() throws {
        let directory = try TemporaryDirectory()
        var book = try UploadBook(directory: directory.file("uploads"), maxOpenBytes: 1 << 30, logger: Logger(label: "test"))
        let begun = try book.begin(size: 100, sha256: SongID(hashing: [0]), client: "a", maxSongBytes: 1 << 30)
        guard case .write(let chunk) = try book.append([UInt8](repeating: 1, count: 100), to: begun.upload, offset: 0, client: "a") else {
            Issue.record("the chunk was not to be written")
            return
        }
        let failure = ErrorBody(code: .unavailable, message: "the server's disk is full", retryAfterMs: 60_000)
        #expect { _ = try book.written(chunk, .failure(failure)) } throws: { ($0 as? ErrorBody) == failure }
        guard case .write = try book.append([UInt8](repeating: 1, count: 100), to: begun.upload, offset: 0, client: "a") else {
            Issue.record("the chunk sent again after a failed write was not to be written")
            return
        }
    }
}

/// A `submit` of an upload sent again while the first is being prepared: told to wait, then
/// given the first one's answer; a failed submit leaves the upload to be submitted again.
@Suite struct UploadBookSubmitTests {
    @Test func aSubmitSentAgainWaitsForTheFirst() throws {
        let directory = try TemporaryDirectory()
        var book = try UploadBook(directory: directory.file("uploads"), maxOpenBytes: 1 << 30, logger: Logger(label: "test"))
        let song = [UInt8](repeating: 7, count: 5000)
        let begun = try book.begin(size: Int64(song.count), sha256: SongID(hashing: song), client: "a", maxSongBytes: 1 << 30)
        guard case .write(let chunk) = try book.append(song, to: begun.upload, offset: 0, client: "a") else {
            Issue.record("the chunk was not to be written")
            return
        }
        _ = try book.written(chunk, chunk.perform(with: book.writer))

        let first = try book.finished(begun.upload, client: "a")
        #expect(first.submitted == nil)
        book.submitting(begun.upload)
        #expect { _ = try book.finished(begun.upload, client: "a") } throws: { ($0 as? ErrorBody)?.code == .busy }
        book.expire(at: .now + UploadBook.idleLimit * 2)
        #expect(book.uploads[begun.upload] != nil, "an upload being submitted was forgotten")

        // It failed (say busy: the queue was full): the upload and its file stay.
        book.submitEnded(begun.upload, answer: nil)
        #expect(try book.finished(begun.upload, client: "a").submitted == nil)
        #expect(FileManager.default.fileExists(atPath: first.path))

        book.submitting(begun.upload)
        let answer = SubmitResponse(song: SongID(hashing: song), jobs: [])
        book.submitEnded(begun.upload, answer: answer)
        #expect(try book.finished(begun.upload, client: "a").submitted == answer)
        #expect(!FileManager.default.fileExists(atPath: first.path))
    }
}
