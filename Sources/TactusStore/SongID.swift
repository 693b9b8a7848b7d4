import Crypto
import Foundation

/// A song's identity: the SHA-256 of its file's bytes, as 64 lowercase hex digits.
///
/// The same audio file gives the same id wherever it lies and whatever its name, so a
/// library never holds a song twice.
public struct SongID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The 64 lowercase hex digits.
    public let hex: String

    /// Accepts 64 hex digits (either case); nil otherwise.
    public init?(_ text: String) {
        let lower = text.lowercased()
        guard lower.utf8.count == 64, lower.utf8.allSatisfy(Self.isHexDigit) else { return nil }
        hex = lower
    }

    /// The id of a file already held in memory.
    public init(hashing bytes: some DataProtocol) {
        hex = Self.hexString(SHA256.hash(data: bytes))
    }

    /// Hashes a file's bytes, streaming it in blocks of 1 MiB so any size fits in memory.
    public static func ofFile(atPath path: String) throws(StoreError) -> SongID {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableFile(path: path, reason: "cannot open the file")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        do {
            while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
                hasher.update(data: block)
            }
        } catch {
            throw .unreadableFile(path: path, reason: "read error")
        }
        return SongID(unchecked: hexString(hasher.finalize()))
    }

    /// True for text that could be the start of an id: hex digits only.
    static func isHexPrefix(_ text: String) -> Bool {
        text.utf8.allSatisfy(isHexDigit)
    }

    init(unchecked hex: String) {
        self.hex = hex
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = SongID(text) else {
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

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private static func hexString(_ digest: SHA256.Digest) -> String {
        Hex.string(digest)
    }
}

/// Lowercase hexadecimal text of bytes.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func string(_ bytes: some Sequence<UInt8>) -> String {
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
