import Foundation

/// A parameter value as it travels through JSON and the command line.
///
/// Numbers are `Double` whatever their declared kind; an integer parameter holds a whole number.
public enum ParameterValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case number(Double)
    case text(String)
    case numbers([Double])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else if let numbers = try? container.decode([Double].self) {
            self = .numbers(numbers)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a parameter value is a number, a string or an array of numbers")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number): try container.encode(number)
        case .text(let text): try container.encode(text)
        case .numbers(let numbers): try container.encode(numbers)
        }
    }

    public var description: String {
        switch self {
        case .number(let number): return Self.format(number)
        case .text(let text): return text
        case .numbers(let numbers): return numbers.map(Self.format).joined(separator: ",")
        }
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

/// What values a parameter accepts.
public enum ParameterKind: Sendable, Hashable {
    /// A real number in a closed range.
    case number(ClosedRange<Double>)
    /// A whole number in a closed range.
    case integer(ClosedRange<Int>)
    /// One of a fixed set of words.
    case choice([String])
    /// A list of numbers, each in `range`, with a count in `count`, strictly increasing.
    case increasingNumbers(range: ClosedRange<Double>, count: ClosedRange<Int>)

    /// The accepted values in words, for error messages and help text.
    public var acceptedValues: String {
        switch self {
        case .number(let range): return "a number in \(ParameterValue.number(range.lowerBound))...\(ParameterValue.number(range.upperBound))"
        case .integer(let range): return "a whole number in \(range.lowerBound)...\(range.upperBound)"
        case .choice(let words): return "one of " + words.joined(separator: ", ")
        case .increasingNumbers(let range, let count):
            return "\(count.lowerBound) to \(count.upperBound) increasing numbers in "
                + "\(ParameterValue.number(range.lowerBound))...\(ParameterValue.number(range.upperBound)), comma-separated"
        }
    }
}

/// The declaration of one detector parameter: its name, what it accepts, its default in each
/// preset, and what it means. The declaration is both the documentation and the validation.
public struct ParameterSpec: Sendable, Hashable {
    public let name: String
    public let kind: ParameterKind
    /// The value used by the `default` preset (and by any preset without its own value).
    public let defaultValue: ParameterValue
    /// Values that differ from `defaultValue` in named presets (for example `classic`).
    public let presetValues: [String: ParameterValue]
    public let summary: String

    public init(
        _ name: String, _ kind: ParameterKind, default defaultValue: ParameterValue,
        presets presetValues: [String: ParameterValue] = [:], summary: String
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.presetValues = presetValues
        self.summary = summary
    }

    /// The default value of this parameter in `preset`.
    public func defaultValue(preset: String) -> ParameterValue {
        presetValues[preset] ?? defaultValue
    }

    /// Checks `value` against the declaration; returns it normalised (whole numbers for integers).
    public func validate(_ value: ParameterValue, detector: String) throws(ParameterError) -> ParameterValue {
        let outOfRange = ParameterError.outOfRange(
            detector: detector, parameter: name, value: value.description, accepted: kind.acceptedValues)
        switch (kind, value) {
        case (.number(let range), .number(let number)):
            guard number.isFinite, range.contains(number) else { throw outOfRange }
            return value
        case (.integer(let range), .number(let number)):
            guard let whole = Int(exactly: number), range.contains(whole) else { throw outOfRange }
            return value
        case (.choice(let words), .text(let word)):
            guard words.contains(word) else { throw outOfRange }
            return value
        case (.increasingNumbers(let range, let count), .numbers(let numbers)):
            guard count.contains(numbers.count),
                numbers.allSatisfy({ $0.isFinite && range.contains($0) }),
                zip(numbers, numbers.dropFirst()).allSatisfy({ $0 < $1 })
            else { throw outOfRange }
            return value
        case (.increasingNumbers, .number(let number)):
            return try validate(.numbers([number]), detector: detector)
        default:
            throw outOfRange
        }
    }

    /// Parses a value written on the command line (`120`, `classic`, `0,200,400`).
    public func parse(_ text: String, detector: String) throws(ParameterError) -> ParameterValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let invalid = ParameterError.outOfRange(
            detector: detector, parameter: name, value: text, accepted: kind.acceptedValues)
        switch kind {
        case .number, .integer:
            guard let number = Double(trimmed) else { throw invalid }
            return try validate(.number(number), detector: detector)
        case .choice:
            return try validate(.text(trimmed), detector: detector)
        case .increasingNumbers:
            let parts = trimmed.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { throw invalid }
            return try validate(.numbers(parts.compactMap { $0 }), detector: detector)
        }
    }
}

/// A complete, validated set of parameter values for one detector, keyed by parameter name.
///
/// Encoded as a JSON object with sorted keys; ``canonicalJSON`` is the exact text stored with
/// every result so that a library can be re-analysed when parameters or versions change.
public struct ParameterSet: Sendable, Hashable, Codable {
    public private(set) var values: [String: ParameterValue]

    public init(_ values: [String: ParameterValue] = [:]) {
        self.values = values
    }

    public init(from decoder: any Decoder) throws {
        values = try [String: ParameterValue](from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try values.encode(to: encoder)
    }

    public subscript(name: String) -> ParameterValue? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// A number parameter. Resolved sets hold every declared parameter, so a missing or
    /// mistyped name is a programming error in the detector.
    public func number(_ name: String) -> Double {
        guard case .number(let number)? = values[name] else {
            preconditionFailure("parameter \(name) is not a resolved number")
        }
        return number
    }

    public func integer(_ name: String) -> Int { Int(number(name)) }

    public func text(_ name: String) -> String {
        guard case .text(let text)? = values[name] else {
            preconditionFailure("parameter \(name) is not a resolved word")
        }
        return text
    }

    public func numbers(_ name: String) -> [Double] {
        guard case .numbers(let numbers)? = values[name] else {
            preconditionFailure("parameter \(name) is not a resolved list")
        }
        return numbers
    }

    /// The parameters as JSON with sorted keys and no whitespace: equal sets give equal text.
    public var canonicalJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a dictionary of plain values cannot fail.
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// A parameter problem, naming the detector, the parameter and what it accepts.
public enum ParameterError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownParameter(detector: String, parameter: String, known: [String])
    case outOfRange(detector: String, parameter: String, value: String, accepted: String)
    case inconsistent(detector: String, parameters: [String], message: String)
    case unknownDetector(name: String, known: [String])

    public var description: String {
        switch self {
        case .unknownParameter(let detector, let parameter, let known):
            return "\(detector): unknown parameter '\(parameter)' (known: \(known.joined(separator: ", ")))"
        case .outOfRange(let detector, let parameter, let value, let accepted):
            return "\(detector): parameter '\(parameter)' = '\(value)' is not accepted; expected \(accepted)"
        case .inconsistent(let detector, let parameters, let message):
            return "\(detector): parameters \(parameters.joined(separator: ", ")): \(message)"
        case .unknownDetector(let name, let known):
            return "unknown detector '\(name)' (available: \(known.joined(separator: ", ")))"
        }
    }
}
