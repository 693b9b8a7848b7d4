import Foundation

/// A detector parameter set on a command line: `DETECTOR.KEY=VALUE`, as `--param
/// comb-filter.preset=classic` of `tactus analyze` and `tactus submit`.
///
/// ```swift
/// let assignment = ParameterAssignment(parsing: "comb-filter.preset=classic")!
/// let resolved = try descriptor.resolve(assignments: [assignment.keyValue])  // typed by the declaration
/// ```
public struct ParameterAssignment: Sendable, Hashable {
    /// The detector's name (before the first dot).
    public var detector: String
    /// The parameter's name (between the first dot and the first `=`).
    public var key: String
    /// The value as written (after the first `=`).
    public var value: String

    /// Parses `DETECTOR.KEY=VALUE`; nil unless the detector, the key and the value are there.
    public init?(parsing text: String) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        let path = parts.first?.split(separator: ".", maxSplits: 1).map(String.init) ?? []
        guard parts.count == 2, path.count == 2, !path[0].isEmpty, !path[1].isEmpty else { return nil }
        detector = path[0]
        key = path[1]
        value = parts[1]
    }

    /// `KEY=VALUE`, as ``DetectorDescriptor/resolve(assignments:)`` takes it.
    public var keyValue: String { "\(key)=\(value)" }

    /// The value typed by its look, for a detector whose declaration is not at hand (the
    /// server checks it against the declaration): `120` a number, `0,200,400` numbers,
    /// anything else a word.
    public var valueByLook: ParameterValue {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let number = Double(trimmed), number.isFinite { return .number(number) }
        let parts = trimmed.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        if trimmed.contains(","), parts.allSatisfy({ $0?.isFinite == true }) { return .numbers(parts.compactMap { $0 }) }
        return .text(trimmed)
    }
}
