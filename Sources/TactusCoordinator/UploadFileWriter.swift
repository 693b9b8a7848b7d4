import Foundation
import Logging
import Synchronization
import TactusProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Writes an upload's chunks to its file around the page cache (`O_DIRECT`) where the file
/// system allows it, and through the page cache otherwise.
///
/// An upload's bytes are written once, by the coordinator, and read once, by the worker that
/// analyses the song. Through the page cache the coordinator copies every byte into pages the
/// kernel must first find and account for, which costs more than the hash of the same bytes
/// (and several times more on a virtual machine whose host takes freed memory back); around it
/// the disk takes the bytes from one staging buffer, reused for every chunk.
///
/// `O_DIRECT` needs the buffer, the file offset and the length to be multiples of the disk's
/// block size: the whole blocks of a chunk that starts on a block go around the cache, and the
/// rest (the end of the song, a chunk that starts between blocks, a chunk under
/// ``minimumDirectBytes``) through it. A file system that refuses `O_DIRECT` (some network file
/// systems, disks with blocks over 4 KiB) is written through the page cache from then on, with
/// the same result on disk; one that takes it and copies all the same (tmpfs) loses nothing.
///
/// A direct write returns once the disk has the bytes (about 0.4 ms for 1 MiB on an SSD): the
/// coordinator writes uploads on a thread of their own, never on its poll loop. Writes are
/// made one at a time (a lock guards the staging buffer).
final class UploadFileWriter: Sendable {
    /// The block every direct write is aligned to: a multiple of any disk's logical block size
    /// in use (512 or 4096 bytes).
    static let alignment = 4096

    /// `O_DIRECT`, which Glibc's Swift module leaves out (it needs `_GNU_SOURCE`): its value in
    /// Linux's `fcntl.h` for the architecture, or nil where it is not known here.
    #if arch(x86_64)
    static let directFlag: Int32? = 0o40000
    #elseif arch(arm64)
    static let directFlag: Int32? = 0o200000
    #else
    static let directFlag: Int32? = nil
    #endif

    /// The smallest chunk written around the cache: a smaller one waits for the disk longer
    /// than its copy into the cache takes (a client may send chunks of 4 KiB).
    static let minimumDirectBytes = 256 << 10

    /// The staging buffer, where a chunk's whole blocks are copied for the disk to take them,
    /// and whether direct writes are still made.
    private struct State {
        let staging: UnsafeMutableRawBufferPointer
        var aroundTheCache: Bool
    }

    private let state: Mutex<State>
    private let logger: Logger

    /// A writer for chunks of at most `maxChunkBytes`, around the cache unless
    /// `aroundTheCache` is false.
    init(maxChunkBytes: Int, aroundTheCache: Bool = true, logger: Logger = Logger(label: "tactus.uploads")) {
        state = Mutex(
            State(
                staging: .allocate(byteCount: maxChunkBytes, alignment: Self.alignment),
                aroundTheCache: aroundTheCache && Self.directFlag != nil))
        self.logger = logger
    }

    deinit { state.withLock { $0.staging.deallocate() } }

    /// False once the file system refused a direct write (or when made so): every chunk goes
    /// through the cache.
    var writesAroundTheCache: Bool { state.withLock { $0.aroundTheCache } }

    /// Writes `chunk` to the existing file at `path`, starting at byte `offset`.
    func write(_ chunk: [UInt8], to path: String, at offset: Int64) throws(ErrorBody) {
        try state.withLock { state throws(ErrorBody) in
            var written = 0
            if state.aroundTheCache && offset % Int64(Self.alignment) == 0 && chunk.count >= Self.minimumDirectBytes {
                written = try writeBlocks(of: chunk, to: path, at: offset, with: &state)
            }
            guard written < chunk.count else { return }
            let descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.failure("open", errno: errno) }
            defer { close(descriptor) }
            let error = chunk.withUnsafeBytes {
                Self.write(UnsafeRawBufferPointer(rebasing: $0[written...]), to: descriptor, at: offset + Int64(written))
            }
            if let error { throw Self.failure("write", errno: error) }
        }
    }

    /// Writes the whole blocks at the start of `chunk` around the cache; returns how many bytes
    /// that was (0 when the file system refuses).
    private func writeBlocks(of chunk: [UInt8], to path: String, at offset: Int64, with state: inout State) throws(ErrorBody) -> Int {
        let count = min(chunk.count, state.staging.count) / Self.alignment * Self.alignment
        guard count > 0, let direct = Self.directFlag else { return 0 }
        let descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC | direct)
        guard descriptor >= 0 else {
            guard errno == EINVAL else { throw Self.failure("open", errno: errno) }
            refused(path, errno: EINVAL, state: &state)
            return 0
        }
        defer { close(descriptor) }
        let staging = state.staging
        chunk.withUnsafeBytes { staging.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        switch Self.write(UnsafeRawBufferPointer(rebasing: staging.prefix(count)), to: descriptor, at: offset) {
        case .none:
            return count
        case .some(EINVAL):
            refused(path, errno: EINVAL, state: &state)
            return 0
        case .some(let error):
            throw Self.failure("write (around the page cache)", errno: error)
        }
    }

    /// Turns direct writes off for good, once the file system refused one, and says so.
    private func refused(_ path: String, errno code: Int32, state: inout State) {
        state.aroundTheCache = false
        logger.notice(
            "the uploads' file system refuses direct writes: uploads go through the page cache from now on",
            metadata: ["file": "\(path)", "error": "\(String(cString: strerror(code)))"])
    }

    /// Writes all of `bytes` at `offset`, again after an interruption or a short write; the
    /// `errno` of a failure, or nil.
    private static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64) -> Int32? {
        var written = 0
        while written < bytes.count {
            let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset) + off_t(written))
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return result < 0 ? errno : EIO }
            written += result
        }
        return nil
    }

    private static func failure(_ operation: String, errno code: Int32) -> ErrorBody {
        let full = code == ENOSPC || code == EDQUOT
        return ErrorBody(
            code: .unavailable,
            message: full ? "the server's disk is full" : "cannot \(operation) the upload's file: \(String(cString: strerror(code)))",
            retryAfterMs: full ? 60_000 : 5000)
    }
}
