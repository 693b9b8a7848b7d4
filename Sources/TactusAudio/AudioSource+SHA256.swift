import Crypto
import Foundation

extension AudioSource {
    /// The song's identity: the SHA-256 of its bytes, as 64 lowercase hex digits (the text
    /// of TactusStore's `SongID`). The same bytes submitted twice are the same song, whatever
    /// they are called. A file is streamed in 1 MiB pieces, never loaded whole.
    ///
    /// - Throws: `unreadable` when the file cannot be read.
    public func sha256() throws(AudioError) -> String {
        var hasher = SHA256()
        switch self {
        case .bytes(let bytes, _):
            hasher.update(data: bytes)
        case .file:
            let reader = try ByteReader(self)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var offset: Int64 = 0
            while offset < reader.length {
                let got = buffer.withUnsafeMutableBytes { reader.read(at: offset, into: $0.baseAddress!, count: $0.count) }
                guard got > 0 else {
                    throw .unreadable(file: reader.name, reason: "read error at byte \(offset)")
                }
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
                offset += Int64(got)
            }
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
