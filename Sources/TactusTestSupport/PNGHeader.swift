import Foundation

/// What a PNG file's header says, for the tests of the figures written as PNG.
public enum PNGHeader {
    /// Why a file is not a PNG image.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The width and height in the header (IHDR) of the PNG file at `path`, after checking the
    /// PNG signature and that IHDR comes first.
    public static func size(atPath path: String) throws -> (width: Int, height: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count > 24 else { throw Failure(description: "\(path): \(bytes.count) bytes, too short for a PNG") }
        guard Array(bytes[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else {
            throw Failure(description: "\(path): no PNG signature")
        }
        guard String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR" else { throw Failure(description: "\(path): IHDR is not first") }
        func bigEndian(_ range: Range<Int>) -> Int { bytes[range].reduce(0) { $0 << 8 | Int($1) } }
        return (bigEndian(16..<20), bigEndian(20..<24))
    }
}
