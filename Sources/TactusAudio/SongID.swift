import Crypto
import Foundation

/// The identity of a song: the SHA-256 of its file's bytes, in lowercase hex. The same
/// bytes submitted twice are the same song.
public struct SongID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// 64 lowercase hexadecimal digits.
    public let hex: String

    /// Wraps a hex digest computed elsewhere (for example read from the store).
    public init(hex: String) {
        self.hex = hex.lowercased()
    }

    /// Hashes `source`: a file is streamed in 1 MiB pieces, never loaded whole.
    public init(of source: AudioSource) throws(AudioError) {
        var hasher = SHA256()
        switch source {
        case .bytes(let bytes, _):
            hasher.update(data: bytes)
        case .file:
            let reader = try ByteReader(source)
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
        hex = hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    public var description: String { hex }
}
