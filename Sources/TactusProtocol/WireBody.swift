import TactusDetector

/// A message's JSON body: `Codable` with the wire's snake_case keys, and checked after
/// decoding for what JSON types cannot express (ranges, formats, exclusive fields).
public protocol WireBody: Codable, Sendable, Hashable {
    /// Checks the decoded body; the default accepts anything that decoded.
    func validate(command: String) throws(ProtocolError)
}

extension WireBody {
    public func validate(command: String) throws(ProtocolError) {}
}

/// Checks shared by the bodies.
enum Check {
    /// Songs named in requests (an id, a prefix): 1 to 128 characters of letters, digits, `.`,
    /// `_` and `-`. Full ids (replies, events, the worker protocol) are ``SongID``s, 64
    /// lowercase hex digits of the content's SHA-256.
    static func song(_ song: String, field: String = "song", command: String) throws(ProtocolError) {
        let allowed = { (byte: UInt8) in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard (1...128).contains(song.utf8.count), song.utf8.allSatisfy(allowed) else {
            throw .invalidBody(command: command, field: field, detail: "a song id is 1 to 128 letters, digits, '.', '_' or '-'")
        }
    }

    /// Detector names: 1 to 64 lowercase letters, digits and dashes (`comb-filter`).
    static func detector(_ name: String, field: String = "detector", command: String) throws(ProtocolError) {
        guard (1...64).contains(name.utf8.count),
            name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else {
            throw .invalidBody(
                command: command, field: field, detail: "a detector name is 1 to 64 lowercase letters, digits and dashes")
        }
    }

    static func positive(_ value: Int64, field: String, command: String) throws(ProtocolError) {
        guard value >= 1 else { throw .invalidBody(command: command, field: field, detail: "must be at least 1") }
    }

    /// Text of 1 to `max` bytes of UTF-8 without NUL: a path or a name reaches C calls, which end
    /// it at a NUL, so `a.mp3\0x` would be checked as one file and opened as another.
    static func text(_ text: String, field: String, max: Int, command: String) throws(ProtocolError) {
        guard (1...max).contains(text.utf8.count) else {
            throw .invalidBody(command: command, field: field, detail: "must have 1 to \(max) bytes of UTF-8")
        }
        guard !text.utf8.contains(0) else {
            throw .invalidBody(command: command, field: field, detail: "must not hold a NUL byte (U+0000)")
        }
    }

    /// Parameter values: numbers finite and at most 2^53 in magnitude (exact in JSON and
    /// convertible to `Int` by integer parameters), text and lists bounded.
    static func parameters(_ set: ParameterSet, field: String, command: String) throws(ProtocolError) {
        let limit = Double(1 << 53)
        for (name, value) in set.values {
            let numbers: [Double]
            switch value {
            case .number(let number): numbers = [number]
            case .numbers(let list): numbers = list
            case .text(let text):
                numbers = []
                guard text.utf8.count <= 256 else {
                    throw .invalidBody(command: command, field: "\(field).\(Printable.text(name, limit: 40))", detail: "text longer than 256 bytes")
                }
            }
            guard (1...64).contains(name.utf8.count), numbers.count <= 4096,
                numbers.allSatisfy({ $0.isFinite && abs($0) <= limit })
            else {
                throw .invalidBody(
                    command: command, field: "\(field).\(Printable.text(name, limit: 40))",
                    detail: "a parameter is named by 1 to 64 bytes; its numbers are finite, at most 2^53 in magnitude, at most 4096")
            }
        }
    }

    static func finite(_ value: Double, field: String, in range: ClosedRange<Double>, command: String) throws(ProtocolError) {
        guard value.isFinite, range.contains(value) else {
            throw .invalidBody(
                command: command, field: field, detail: "must be a number in \(range.lowerBound)...\(range.upperBound)")
        }
    }
}

extension ErrorBody: WireBody {
    public func validate(command: String) throws(ProtocolError) {
        if let retryAfterMs, retryAfterMs < 0 {
            throw .invalidBody(command: command, field: "retry_after_ms", detail: "must not be negative")
        }
    }
}
