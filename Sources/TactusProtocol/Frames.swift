import Foundation

/// Reads the frames of one message in order, with typed errors naming what is missing: what a
/// ``ClientCommand`` reads its request and answer with.
public struct FrameReader {
    private let frames: [[UInt8]]
    private var position: Int
    let message: String
    /// The command being decoded, for errors (empty until known).
    public internal(set) var command: String = ""

    init(_ frames: [[UInt8]], message: String, limits: ProtocolLimits, minimum: Int) throws(ProtocolError) {
        guard frames.count <= limits.maxFrames else {
            throw .tooManyFrames(message: message, limit: limits.maxFrames, received: frames.count)
        }
        guard frames.count >= minimum else {
            throw .missingFrames(message: message, expected: minimum, received: frames.count)
        }
        self.frames = frames
        self.position = 0
        self.message = message
    }

    public var remaining: Int { frames.count - position }

    /// The next frame, which must exist (the minimum count was checked at init for the
    /// header; later frames are checked here).
    public mutating func next(_ name: String, limit: Int) throws(ProtocolError) -> [UInt8] {
        guard position < frames.count else {
            throw .missingFrames(message: message, expected: position + 1, received: frames.count)
        }
        let frame = frames[position]
        position += 1
        guard frame.count <= limit else { throw .frameTooLarge(frame: name, size: frame.count, limit: limit) }
        return frame
    }

    /// The remaining frames, which must number at most `max` (and at least `min`).
    public mutating func rest(_ name: String, min: Int = 0, max: Int) throws(ProtocolError) -> [[UInt8]] {
        guard remaining >= min else {
            throw .invalidFrame(command: command, frame: name, detail: "expected \(min) \(name) frame(s), received \(remaining)")
        }
        guard remaining <= max else {
            throw .invalidFrame(
                command: command, frame: name, detail: "expected at most \(max) \(name) frame(s), received \(remaining)")
        }
        let rest = Array(frames[position...])
        position = frames.count
        return rest
    }
}

/// JSON bodies: UTF-8 JSON objects, keys sorted on output, `/` unescaped, dates in ISO 8601
/// (as the CLI's `--json` writes them).
public enum JSONBody {
    /// `value` as a JSON body; a value that JSON cannot hold (a non-finite number) is
    /// ``ProtocolError/unencodable(command:detail:)`` for `command`.
    public static func encode(_ value: some Encodable, command: String) throws(ProtocolError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return Array(try encoder.encode(value))
        } catch let EncodingError.invalidValue(_, context) {
            throw .unencodable(command: command, detail: "\(path(context.codingPath)): \(context.debugDescription)")
        } catch {
            throw .unencodable(command: command, detail: String(describing: error))
        }
    }

    /// Decodes `frame` as a `T`. The frame must be at most `limit` bytes and hold a JSON
    /// object; errors name the field concerned.
    static func decode<T: Decodable>(_ type: T.Type, from frame: [UInt8], command: String, limit: Int) throws(ProtocolError) -> T {
        guard frame.count <= limit else { throw .frameTooLarge(frame: "body", size: frame.count, limit: limit) }
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        guard frame.first(where: { !whitespace.contains($0) }) == UInt8(ascii: "{") else {
            throw .invalidJSON(command: command, detail: "expected a JSON object starting with '{'")
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(T.self, from: Data(frame))
        } catch let error as DecodingError {
            throw describe(error, command: command)
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw .invalidJSON(command: command, detail: Printable.text(String(describing: error), limit: 200))
        }
    }

    private static func describe(_ error: DecodingError, command: String) -> ProtocolError {
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidBody(command: command, field: path(context.codingPath + [key]), detail: "missing")
        case .typeMismatch(let type, let context):
            return .invalidBody(command: command, field: path(context.codingPath), detail: "expected \(typeName(type))")
        case .valueNotFound(let type, let context):
            return .invalidBody(command: command, field: path(context.codingPath), detail: "null where \(typeName(type)) is required")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            // Foundation puts the parser's explanation (with its position) in the underlying error.
            let detail = context.underlyingError.map { String(describing: $0) } ?? context.debugDescription
            return .invalidJSON(command: command, detail: Printable.text(detail, limit: 200))
        case .dataCorrupted(let context):
            return .invalidBody(
                command: command, field: path(context.codingPath), detail: Printable.text(context.debugDescription, limit: 200))
        @unknown default:
            return .invalidJSON(command: command, detail: Printable.text(String(describing: error), limit: 200))
        }
    }

    /// `windows[3].start_s`, with keys from the input escaped and cut short.
    static func path(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "(body)" }
        var text = ""
        for key in codingPath.suffix(8) {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + Printable.text(key.stringValue, limit: 40)
            }
        }
        return text
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is [Any].Type: "an array"
        default: String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}

/// Arrays of floats as frames: IEEE 754 float32, little-endian, packed, 4 bytes per value.
public enum Float32Frame {
    /// The frame of `values`.
    public static func encode(_ values: [Float]) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(values.count * 4)
        for value in values {
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// The values of `frame`. Its size must be a multiple of 4, and every value finite.
    public static func decode(_ frame: [UInt8], command: String = "float32", name: String = "float32") throws(ProtocolError) -> [Float] {
        guard frame.count % 4 == 0 else {
            throw .invalidFrame(
                command: command, frame: name, detail: "\(frame.count) bytes is not a whole number of 4-byte float32 values")
        }
        var values = [Float]()
        values.reserveCapacity(frame.count / 4)
        var index = 0
        while index < frame.count {
            let bits = UInt32(frame[index]) | UInt32(frame[index + 1]) << 8 | UInt32(frame[index + 2]) << 16
                | UInt32(frame[index + 3]) << 24
            let value = Float(bitPattern: bits)
            guard value.isFinite else {
                throw .invalidFrame(command: command, frame: name, detail: "value \(index / 4) is not a finite number")
            }
            values.append(value)
            index += 4
        }
        return values
    }
}

/// The body of messages that carry nothing (`detectors`, HEARTBEAT): `{}` on output; any
/// JSON object is accepted, its fields ignored.
public struct EmptyBody: WireBody {
    public init() {}
}
