import Foundation

/// Where the bytes of a song come from: a file on disk or bytes already in memory (a
/// submission received over the network).
///
/// The format is always recognised from the content, never from a file name; the `name`
/// of in-memory bytes is only used in messages.
///
/// ```swift
/// let fromDisk = AudioSource.file("/music/song.mp3")
/// let fromNetwork = AudioSource.bytes(receivedBytes, name: "upload 42")
/// ```
public enum AudioSource: Sendable {
    /// A file, read in pieces as decoding proceeds (never loaded whole).
    case file(String)
    /// Bytes in memory; `name` identifies them in errors and logs.
    case bytes([UInt8], name: String)
    /// A file already open for reading (a song opened safely below a library root), read in
    /// pieces through a duplicate of `descriptor`, never by name; `name` identifies it in messages.
    case descriptor(Int32, name: String)

    /// Bytes in memory, from Foundation `Data`.
    public static func data(_ data: Data, name: String) -> AudioSource {
        .bytes([UInt8](data), name: name)
    }

    /// The file path, or the name given to in-memory bytes: what messages call this source.
    public var name: String {
        switch self {
        case .file(let path): path
        case .bytes(_, let name), .descriptor(_, let name): name
        }
    }
}

/// Random-access reads over an ``AudioSource``: the one place that touches the file system.
/// libmpg123 and libsndfile read through it (their reader-replacement and virtual I/O hooks),
/// so both decoders work the same way on files and on memory.
final class ByteReader {
    private enum Storage {
        case file(descriptor: Int32)
        case memory([UInt8])
    }

    private let storage: Storage
    /// Read-ahead for files: decoders ask for a few bytes at a time (a frame header, then
    /// its body), so small reads are served from one larger `pread`.
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    private var windowFill = 0
    private static let windowSize = 64 * 1024
    /// The total number of bytes.
    let length: Int64
    /// The read position used by the sequential `read`/`seek` interface of the decoders.
    private(set) var position: Int64 = 0
    let name: String
    /// The first read the system refused: at which byte, and its reason (`strerror`). The
    /// decoders take a failed read for the end of the data, so without it a read error (a
    /// network share's hiccup, a failing disk) would look like damaged or foreign content.
    private(set) var failure: (offset: Int64, reason: String)?

    /// `unreadable`, naming the byte and the reason, once a read has failed; nil until then.
    var readError: AudioError? {
        failure.map { .unreadable(file: name, reason: "read error at byte \($0.offset): \($0.reason)") }
    }

    init(_ source: AudioSource) throws(AudioError) {
        name = source.name
        switch source {
        case .bytes(let bytes, _):
            storage = .memory(bytes)
            length = Int64(bytes.count)
        case .file, .descriptor:
            let path = source.name
            let descriptor: Int32
            if case .descriptor(let given, _) = source {
                descriptor = fcntl(given, F_DUPFD_CLOEXEC, 0)
            } else {
                // Without waiting: opening a FIFO for reading blocks until a writer comes (a FIFO
                // dropped into a music folder would hang the command); it is refused below.
                descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            }
            guard descriptor >= 0 else {
                throw .unreadable(file: path, reason: String(cString: strerror(errno)))
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw .unreadable(file: path, reason: reason)
            }
            guard (status.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                throw .unreadable(file: path, reason: "not a regular file")
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            storage = .file(descriptor: descriptor)
            length = Int64(status.st_size)
        }
    }

    deinit {
        if case .file(let descriptor) = storage {
            close(descriptor)
        }
    }

    /// Reads up to `count` bytes at `offset` into `buffer`; returns the number read (0 at the
    /// end), or -1 on an I/O error.
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        guard offset >= 0, offset < length, count > 0 else { return 0 }
        let wanted = Int(min(Int64(count), length - offset))
        switch storage {
        case .memory(let bytes):
            bytes.withUnsafeBytes { all in
                buffer.copyMemory(from: all.baseAddress! + Int(offset), byteCount: wanted)
            }
            return wanted
        case .file(let descriptor):
            guard wanted < Self.windowSize else {
                return readFully(descriptor, into: buffer, count: wanted, at: offset)
            }
            if offset < windowStart || offset + Int64(wanted) > windowStart + Int64(windowFill) {
                if window.isEmpty { window = [UInt8](repeating: 0, count: Self.windowSize) }
                let got = window.withUnsafeMutableBytes {
                    readFully(descriptor, into: $0.baseAddress!, count: $0.count, at: offset)
                }
                windowStart = offset
                windowFill = max(got, 0)
                guard got >= 0 else { return -1 }
            }
            let available = min(wanted, Int(windowStart + Int64(windowFill) - offset))
            window.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + Int(offset - windowStart), byteCount: available) }
            return available
        }
    }

    /// `pread` until `count` bytes, the end of the file, or an error (-1 if nothing was read;
    /// the first error is kept in ``failure``).
    private func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Int {
        var done = 0
        while done < count {
            let got = Foundation.pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                if failure == nil { failure = (offset + Int64(done), String(cString: strerror(errno))) }
                return done > 0 ? done : -1
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// Up to `count` bytes from `offset` (fewer near the end).
    func bytes(at offset: Int64, count: Int) -> [UInt8] {
        guard offset < length, count > 0 else { return [] }
        let wanted = Int(min(Int64(count), length - offset))
        var result = [UInt8](repeating: 0, count: wanted)
        let got = result.withUnsafeMutableBytes { read(at: offset, into: $0.baseAddress!, count: wanted) }
        result.removeLast(wanted - max(got, 0))
        return result
    }

    // MARK: Sequential access for the C decoders' callbacks

    /// Reads from the current position and advances it.
    func readSequentially(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        let got = read(at: position, into: buffer, count: count)
        if got > 0 { position += Int64(got) }
        return got
    }

    /// Moves the current position (`whence` as for `lseek`); returns the new position or -1.
    func seek(to offset: Int64, whence: Int32) -> Int64 {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = length
        default: return -1
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return -1 }
        position = target
        return target
    }
}
