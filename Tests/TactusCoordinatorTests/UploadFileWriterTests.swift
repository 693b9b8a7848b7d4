import Foundation
import TactusProtocol
import TactusTestSupport
import Testing

@testable import TactusCoordinator

/// An upload's file as ``UploadFileWriter`` writes it: the bytes on disk are the chunks',
/// whatever their sizes and where they start, and the whole blocks of a chunk that starts on a
/// block go around the page cache.
@Suite struct UploadFileWriterTests {
    /// Chunks of every kind, in order: whole blocks, a chunk ending between blocks, chunks
    /// starting between blocks (written through the cache), a chunk starting on a block again.
    @Test func theFileHoldsTheChunksWhateverTheirSizes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("upload")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        // Ends at 3 MiB + 9,099 bytes; 7,285 bytes more come back to a block, where 12,288 bytes start.
        let sizes = [1 << 20, 1 << 20, 5000, 4096, 3, 1 << 20, 7285, 12_288, 1]
        var generator = SystemRandomNumberGenerator()
        let chunks = sizes.map { size in (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20)
        var offset: Int64 = 0
        for chunk in chunks {
            try writer.write(chunk, to: path, at: offset)
            offset += Int64(chunk.count)
        }
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written.count == chunks.map(\.count).reduce(0, +))
        #expect(written == chunks.flatMap { $0 })
    }

    /// Four chunks of 1 MiB and an end of 1,000 bytes: the 4 MiB are not in the page cache
    /// once written (`mincore` of the file's mapping), the end is.
    @Test(.enabled(if: temporaryFilesTakeDirectWrites, "the temporary directory's file system refuses O_DIRECT"))
    func wholeBlocksAreWrittenAroundThePageCache() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("upload")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20)
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        for index in 0..<4 { try writer.write(chunk, to: path, at: Int64(index << 20)) }
        try writer.write([UInt8](repeating: 0xA5, count: 1000), to: path, at: 4 << 20)
        #expect(writer.writesAroundTheCache)

        let size = (4 << 20) + 1000
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let mapping = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0))
        #expect(mapping != MAP_FAILED)
        defer { munmap(mapping, size) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var resident = [UInt8](repeating: 0, count: (size + page - 1) / page)
        #expect(mincore(mapping, size, &resident) == 0)
        let blockPages = (4 << 20) / page
        #expect(resident.prefix(blockPages).allSatisfy { $0 & 1 == 0 }, "the blocks written around the cache are in it")
        #expect(resident[blockPages] & 1 == 1, "the end, written through the cache, is not in it")
    }

    /// A file that is not there: an error naming the problem, nothing created.
    @Test func aMissingFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("gone")
        let writer = UploadFileWriter(maxChunkBytes: 1 << 20)
        #expect {
            try writer.write([UInt8](repeating: 1, count: 8192), to: path, at: 0)
        } throws: { error in
            guard let body = error as? ErrorBody else { return false }
            return body.code == .unavailable && body.message.contains("cannot open the upload's file")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Whether a file in the temporary directory can be opened with `O_DIRECT`.
    static var temporaryFilesTakeDirectWrites: Bool {
        guard let flag = UploadFileWriter.directFlag, let directory = try? TemporaryDirectory() else { return false }
        let descriptor = open(directory.file("probe"), O_WRONLY | O_CREAT | flag, 0o600)
        defer { if descriptor >= 0 { close(descriptor) } }
        return descriptor >= 0
    }
}
