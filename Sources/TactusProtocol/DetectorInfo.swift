import Foundation
import TactusDetector

/// A detector as workers announce it and clients see it: what
/// ``TactusDetector/DetectorDescriptor`` holds, in a form JSON can carry.
public struct DetectorInfo: WireBody {
    public var name: String
    public var version: String
    public var summary: String
    /// Every parameter, the common ones (`preset`, `min_bpm`, `max_bpm`) first, as
    /// ``TactusDetector/DetectorDescriptor/parameters`` lists them.
    public var parameters: [ParameterDeclaration]
    /// True for an advisory detector (``TactusDetector/DetectorDescriptor/advisory``): its
    /// analyses do not vote in the consensus and it runs only when named. Absent otherwise.
    public var advisory: Bool?

    public init(name: String, version: String, summary: String, parameters: [ParameterDeclaration], advisory: Bool? = nil) {
        self.name = name
        self.version = version
        self.summary = summary
        self.parameters = parameters
        self.advisory = advisory
    }

    /// The wire form of a descriptor.
    public init(_ descriptor: DetectorDescriptor) {
        self.init(
            name: descriptor.name, version: descriptor.version, summary: descriptor.summary,
            parameters: descriptor.parameters.map(ParameterDeclaration.init), advisory: descriptor.advisory ? true : nil)
    }

    /// The descriptor this announces, so the coordinator can resolve and validate a client's
    /// parameters for an external worker exactly as for a built-in detector.
    ///
    /// - Throws: ``ProtocolError/invalidBody(command:field:detail:)`` when a declaration is
    ///   inconsistent, or the common parameters are not declared first as
    ///   ``TactusDetector/DetectorDescriptor/commonParameters(presets:)`` declares them.
    public func descriptor(command: String = "READY") throws(ProtocolError) -> DetectorDescriptor {
        var specs: [ParameterSpec] = []
        for (index, declaration) in parameters.enumerated() {
            specs.append(try declaration.spec(field: "detector.parameters[\(index)]", command: command))
        }
        let commonNames = DetectorDescriptor.commonParameters(presets: ["default"]).map(\.name)
        guard specs.count >= commonNames.count, Array(specs.prefix(commonNames.count).map(\.name)) == commonNames,
            case .choice(let presets) = specs[0].kind, presets.first == "default"
        else {
            throw .invalidBody(
                command: command, field: "detector.parameters",
                detail: "the common parameters \(commonNames.joined(separator: ", ")) come first, and preset's first choice is default")
        }
        let descriptor = DetectorDescriptor(
            name: name, version: version, summary: summary, presets: Array(presets.dropFirst()),
            specific: Array(specs.dropFirst(commonNames.count)), advisory: advisory ?? false)
        // The common parameters must mean what they mean everywhere; their summaries may differ.
        let standard = { (spec: ParameterSpec) -> [AnyHashable] in [spec.name, spec.kind, spec.defaultValue, spec.presetValues] }
        guard descriptor.parameters.map(standard) == specs.map(standard) else {
            throw .invalidBody(
                command: command, field: "detector.parameters",
                detail: "the common parameters must be declared with their standard kinds, ranges and defaults")
        }
        return descriptor
    }

    /// The largest declaration a worker may send, as JSON: ours take 2 to 6 KiB. The
    /// coordinator holds every worker's and answers `detectors` with them all.
    public static let maxDeclarationBytes = 64 << 10

    public func validate(command: String) throws(ProtocolError) {
        try Check.detector(name, field: "detector.name", command: command)
        try Check.text(version, field: "detector.version", max: 64, command: command)
        guard summary.utf8.count <= 1024 else {
            throw .invalidBody(command: command, field: "detector.summary", detail: "must have at most 1024 bytes")
        }
        guard parameters.count <= 64 else {
            throw .invalidBody(command: command, field: "detector.parameters", detail: "at most 64 parameters")
        }
        _ = try descriptor(command: command)
        let size = (try? JSONEncoder().encode(self).count) ?? Int.max
        guard size <= Self.maxDeclarationBytes else {
            throw .invalidBody(
                command: command, field: "detector", detail: "the declaration has \(size) bytes of JSON, more than \(Self.maxDeclarationBytes)")
        }
    }
}

/// The wire form of a ``TactusDetector/ParameterSpec``: a parameter's name, what it accepts,
/// its defaults and its meaning.
///
/// `kind` is `number` (a real in `min...max`), `integer` (a whole number in `min...max`),
/// `choice` (one of `choices`) or `numbers` (`min_count` to `max_count` strictly increasing
/// numbers in `min...max`).
public struct ParameterDeclaration: Sendable, Hashable, Codable {
    public var name: String
    public var kind: String
    public var min: Double?
    public var max: Double?
    public var choices: [String]?
    public var minCount: Int?
    public var maxCount: Int?
    public var `default`: ParameterValue
    /// Values that differ from `default` in named presets.
    public var presets: [String: ParameterValue]
    public var summary: String

    enum CodingKeys: String, CodingKey {
        case name, kind, min, max, choices, `default`, presets, summary
        case minCount = "min_count", maxCount = "max_count"
    }

    public init(_ spec: ParameterSpec) {
        name = spec.name
        `default` = spec.defaultValue
        presets = spec.presetValues
        summary = spec.summary
        switch spec.kind {
        case .number(let range):
            kind = "number"
            (min, max) = (range.lowerBound, range.upperBound)
        case .integer(let range):
            kind = "integer"
            (min, max) = (Double(range.lowerBound), Double(range.upperBound))
        case .choice(let words):
            kind = "choice"
            choices = words
        case .increasingNumbers(let range, let count):
            kind = "numbers"
            (min, max) = (range.lowerBound, range.upperBound)
            (minCount, maxCount) = (count.lowerBound, count.upperBound)
        }
    }

    /// The declaration as a ``TactusDetector/ParameterSpec``, its default values checked
    /// against what it accepts.
    public func spec(field: String, command: String) throws(ProtocolError) -> ParameterSpec {
        func invalid(_ detail: String) -> ProtocolError {
            .invalidBody(command: command, field: field, detail: detail)
        }
        func range() throws(ProtocolError) -> ClosedRange<Double> {
            guard let min, let max, min.isFinite, max.isFinite, min <= max else {
                throw invalid("kind \(kind) needs finite min <= max")
            }
            return min...max
        }
        let parameterKind: ParameterKind
        switch kind {
        case "number":
            parameterKind = .number(try range())
        case "integer":
            let bounds = try range()
            let limit = Double(1 << 53)
            guard bounds.lowerBound == bounds.lowerBound.rounded(), bounds.upperBound == bounds.upperBound.rounded(),
                bounds.lowerBound >= -limit, bounds.upperBound <= limit
            else { throw invalid("an integer parameter has whole-number bounds") }
            parameterKind = .integer(Int(bounds.lowerBound)...Int(bounds.upperBound))
        case "choice":
            guard let choices, !choices.isEmpty, choices.count <= 64 else { throw invalid("kind choice needs 1 to 64 choices") }
            parameterKind = .choice(choices)
        case "numbers":
            let bounds = try range()
            guard let minCount, let maxCount, minCount >= 1, minCount <= maxCount, maxCount <= 4096 else {
                throw invalid("kind numbers needs 1 <= min_count <= max_count <= 4096")
            }
            parameterKind = .increasingNumbers(range: bounds, count: minCount...maxCount)
        default:
            throw invalid("unknown kind '\(Printable.text(kind, limit: 32))'; known: number, integer, choice, numbers")
        }
        guard (1...64).contains(name.utf8.count) else { throw invalid("a parameter name has 1 to 64 bytes") }
        guard summary.utf8.count <= 1024 else { throw invalid("a parameter's summary has at most 1024 bytes") }
        guard (choices ?? []).allSatisfy({ (1...64).contains($0.utf8.count) }), presets.count <= 32,
            presets.keys.allSatisfy({ (1...64).contains($0.utf8.count) })
        else { throw invalid("choices and preset names have 1 to 64 bytes, and there are at most 32 presets") }
        try Check.parameters(ParameterSet(presets.merging(["default": `default`]) { value, _ in value }), field: field, command: command)
        let spec = ParameterSpec(name, parameterKind, default: `default`, presets: presets, summary: summary)
        for (preset, value) in [("default", `default`)] + presets.sorted(by: { $0.key < $1.key }) {
            do {
                _ = try spec.validate(value, detector: "")
            } catch {
                throw invalid("the value for preset '\(Printable.text(preset, limit: 32))' is not accepted: expected \(parameterKind.acceptedValues)")
            }
        }
        return spec
    }
}
