/// What a detector is, as clients and the store see it: its name, its version, a one-line
/// description and its declared parameters.
public struct DetectorDescriptor: Sendable, Hashable {
    /// Stable identifier, lowercase with dashes (`comb-filter`).
    public let name: String
    /// Bumped whenever results can change, so stored results can be told apart.
    public let version: String
    public let summary: String
    /// Every parameter, the common ones (``DetectorDescriptor/commonParameters``) first.
    public let parameters: [ParameterSpec]
    /// The sample rate the detector's front end works at, when it works at one rate whatever
    /// the song's (a network trained at 22,050 Hz): its sessions take any rate and resample
    /// to it, once per song for every detector that declares the same rate (``SharedFrontEnds``),
    /// and a decoder may deliver any rate at or above it. Nil: the detector works at the
    /// song's own rate and reads its whole band.
    public let analysisSampleRate: Double?
    /// Whether the detector is advisory: its analyses are stored, shown and compared, but do
    /// not vote in the consensus, and it runs only when a request names it (it would cost
    /// analysis time and add nothing to the consensus). A detector joins the consensus only
    /// when that makes the consensus more accurate on both shared corpora (`tactus-bench
    /// accuracy` prints the consensus with and without each detector).
    public let advisory: Bool

    /// Declares a detector. `specific` lists the detector's own parameters; the common ones
    /// (`preset`, `min_bpm`, `max_bpm`) are added in front. `presets` names the presets in
    /// addition to `default` (for example `classic`).
    /// `analysisSampleRate` is the rate the detector's front end works at, nil for the song's
    /// own; `advisory`, whether it stays out of the consensus and runs only when named.
    public init(
        name: String, version: String, summary: String, presets: [String] = ["classic"], specific: [ParameterSpec],
        analysisSampleRate: Double? = nil, advisory: Bool = false
    ) {
        self.name = name
        self.version = version
        self.summary = summary
        self.parameters = Self.commonParameters(presets: ["default"] + presets) + specific
        self.analysisSampleRate = analysisSampleRate
        self.advisory = advisory
    }

    /// Parameters every detector has.
    public static func commonParameters(presets: [String]) -> [ParameterSpec] {
        [
            ParameterSpec(
                "preset", .choice(presets), default: .text("default"),
                summary: "default: our most accurate configuration; classic: the source documents' configuration"),
            ParameterSpec(
                "min_bpm", .number(20...400), default: .number(60),
                summary: "lowest tempo reported, in beats per minute"),
            ParameterSpec(
                "max_bpm", .number(20...400), default: .number(200),
                summary: "highest tempo reported, in beats per minute (a range of one octave gives a unique answer)"),
        ]
    }

    /// The declaration of `name`, if the detector has such a parameter.
    public func parameter(_ name: String) -> ParameterSpec? {
        parameters.first { $0.name == name }
    }

    /// Resolves user-given values into a complete, validated parameter set: the preset
    /// (given or `default`) supplies every value not given. Unknown names and out-of-range
    /// values are errors naming the parameter and what it accepts.
    public func resolve(_ given: ParameterSet = ParameterSet()) throws(ParameterError) -> ParameterSet {
        for name in given.values.keys.sorted() where parameter(name) == nil {
            throw .unknownParameter(detector: self.name, parameter: name, known: parameters.map(\.name))
        }
        var preset = "default"
        if let presetSpec = parameter("preset"), let value = given["preset"] {
            guard case .text(let word) = try presetSpec.validate(value, detector: self.name) else {
                preconditionFailure("a validated choice is a word")
            }
            preset = word
        }
        var resolved = ParameterSet()
        for spec in parameters {
            let value = given[spec.name] ?? spec.defaultValue(preset: preset)
            resolved[spec.name] = try spec.validate(value, detector: self.name)
        }
        if resolved.number("min_bpm") >= resolved.number("max_bpm") {
            throw .inconsistent(
                detector: self.name, parameters: ["min_bpm", "max_bpm"], message: "min_bpm must be below max_bpm")
        }
        return resolved
    }

    /// Parses `KEY=VALUE` command-line assignments and resolves them.
    public func resolve(assignments: [String]) throws(ParameterError) -> ParameterSet {
        var given = ParameterSet()
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            let key = parts.first ?? ""
            guard parts.count == 2, let spec = parameter(key) else {
                throw .unknownParameter(detector: name, parameter: key, known: parameters.map(\.name))
            }
            given[key] = try spec.parse(parts[1], detector: name)
        }
        return try resolve(given)
    }
}
