import Crypto
import Foundation

/// The identity of a song: the SHA-256 of its file's bytes, as 64 lowercase hex digits.
///
/// The same bytes give the same id wherever they lie and whatever their name, so a song
/// submitted twice is one song and a library never holds it twice.
public struct SongID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The 64 lowercase hex digits.
    public let hex: String

    /// Accepts 64 hex digits (either case); nil otherwise.
    public init?(_ text: String) {
        let lower = text.lowercased()
        guard lower.utf8.count == 64, Self.isHexPrefix(lower) else { return nil }
        hex = lower
    }

    /// The id of bytes held in memory.
    public init(hashing bytes: some DataProtocol) {
        self.init(digest: SHA256.hash(data: bytes))
    }

    private init(digest: SHA256.Digest) {
        hex = Hex.string(digest)
    }

    /// Hashes `source`: a file is streamed in 1 MiB pieces, never loaded whole.
    public init(of source: AudioSource) throws(AudioError) {
        switch source {
        case .bytes(let bytes, _):
            self.init(hashing: bytes)
        case .file:
            var hasher = SHA256()
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
            self.init(digest: hasher.finalize())
        }
    }

    /// True for text made of hex digits only (either case): what could start an id.
    public static func isHexPrefix(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let id = SongID(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a song id is 64 hex digits")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    public var description: String { hex }

    /// The first 12 digits, enough to tell songs apart in a table.
    public var short: String { String(hex.prefix(12)) }

    public static func < (lhs: SongID, rhs: SongID) -> Bool { lhs.hex < rhs.hex }
}
