/// A set of detector types, looked up by name.
///
/// The built-in set is `BuiltinDetectors.registry` in `TactusAnalysis`; external workers
/// add detectors at run time over the wire, not through this type.
public struct DetectorRegistry: Sendable {
    public let detectorTypes: [any TempoDetector.Type]

    public init(_ detectorTypes: [any TempoDetector.Type]) {
        self.detectorTypes = detectorTypes
    }

    public var descriptors: [DetectorDescriptor] { detectorTypes.map { $0.descriptor } }
    public var names: [String] { descriptors.map(\.name) }
    /// The detectors that run when a request names none: every one that is not advisory.
    public var defaultNames: [String] { descriptors.filter { !$0.advisory }.map(\.name) }
    /// The advisory detectors' names (``DetectorDescriptor/advisory``): they do not vote in the consensus.
    public var advisoryNames: Set<String> { Set(descriptors.filter(\.advisory).map(\.name)) }

    public func descriptor(named name: String) -> DetectorDescriptor? {
        descriptors.first { $0.name == name }
    }

    /// Creates the detector `name` from user-given parameters (validated and completed from
    /// the chosen preset).
    public func make(_ name: String, parameters given: ParameterSet = ParameterSet()) throws(ParameterError) -> any TempoDetector {
        guard let type = detectorTypes.first(where: { $0.descriptor.name == name }) else {
            throw .unknownDetector(name: name, known: names)
        }
        return try type.init(parameters: type.descriptor.resolve(given))
    }
}
