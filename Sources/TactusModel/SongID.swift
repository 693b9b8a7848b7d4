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

    /// Hashes bytes given piece by piece (a file streamed in pieces, never loaded whole).
    public struct Hasher {
        private var sha256 = SHA256()

        public init() {}

        /// Adds the next piece of the song's bytes.
        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            sha256.update(bufferPointer: bytes)
        }

        /// The id of every byte added.
        public func finalize() -> SongID {
            SongID(digest: sha256.finalize())
        }
    }

    /// Hashes the file at `path` in 1 MiB pieces (never loaded whole).
    public static func ofFile(atPath path: String) throws(StoreError) -> SongID {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw .unreadableFile(path: path, reason: "cannot open the file")
        }
        defer { try? file.close() }
        var hasher = Hasher()
        do {
            while let piece = try file.read(upToCount: 1 << 20), !piece.isEmpty {
                piece.withUnsafeBytes { hasher.update($0) }
            }
        } catch {
            throw .unreadableFile(path: path, reason: "\(error)")
        }
        return hasher.finalize()
    }

    /// True for text made of hex digits only (either case): what could start an id.
    public static func isHexPrefix(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    /// Decodes an id as it is encoded, ``hex``: 64 lowercase hex digits, nothing else (the
    /// protocol's messages and the library's files never hold another form).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a song id is 64 lowercase hex digits")
        }
        hex = text
    }

    /// Encodes the id as ``hex``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    public var description: String { hex }

    /// The first 12 digits, enough to tell songs apart in a table.
    public var short: String { String(hex.prefix(12)) }

    public static func < (lhs: SongID, rhs: SongID) -> Bool { lhs.hex < rhs.hex }
}
