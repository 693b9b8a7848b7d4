import Foundation
import NIOCore
import TactusModel
import TactusProtocol

/// An upload's body as it arrives, written to a file of its own and hashed on the way, so that
/// the gateway holds one piece of it in memory whatever its size (as nginx spools request
/// bodies). The file is removed as soon as it is made: only its descriptor names it, and it is
/// gone when the gateway lets go of it or exits, whatever happens. The song then goes to the
/// coordinator in chunks read back from the file (``SpooledSong``): a slow client holds the
/// gateway's disk, never one of its connections to the coordinator.
final class UploadSpool {
    private let descriptor: Int32
    private let directory: String
    /// False once ``finish()`` handed the file over.
    private var ownsFile = true
    private var hasher = SongID.Hasher()
    private(set) var size = 0

    init(in directory: String) throws(HTTPFailure) {
        var template = Array((directory.hasSuffix("/") ? directory : directory + "/").appending("tactus-upload-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw Self.failure("cannot make an upload file in \(directory): \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
        self.directory = directory
    }

    /// Writes the next piece of the body.
    func append(_ piece: ByteBuffer) throws(HTTPFailure) {
        let written = piece.withUnsafeReadableBytes { bytes -> Int32 in
            hasher.update(bytes)
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return errno }
                offset += count
            }
            return 0
        }
        guard written == 0 else {
            throw Self.failure("cannot spool an upload in \(directory): \(String(cString: strerror(written)))")
        }
        size += piece.readableBytes
    }

    /// The whole body, read back in chunks from here on (the spool takes no more).
    func finish() -> SpooledSong {
        ownsFile = false
        return SpooledSong(descriptor: descriptor, size: size, id: hasher.finalize())
    }

    deinit { if ownsFile { close(descriptor) } }

    private static func failure(_ message: String) -> HTTPFailure {
        HTTPFailure(.serviceUnavailable, .unavailable, message, retryAfterMs: 10_000)
    }
}

/// A spooled upload, whole: its size, its song id, and its bytes read back from the file.
final class SpooledSong: Sendable {
    let size: Int
    let id: SongID
    private let descriptor: Int32

    fileprivate init(descriptor: Int32, size: Int, id: SongID) {
        self.descriptor = descriptor
        self.size = size
        self.id = id
    }

    /// `count` bytes from `offset`.
    func bytes(from offset: Int, count: Int) throws(HTTPFailure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset + filled)) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                let reason = read == 0 ? "it ended early" : String(cString: strerror(errno))
                throw HTTPFailure(.internalServerError, .internal, "cannot read a spooled upload back: \(reason)")
            }
            filled += read
        }
        return bytes
    }

    deinit { close(descriptor) }
}
