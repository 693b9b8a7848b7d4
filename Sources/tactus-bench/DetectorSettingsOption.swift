import ArgumentParser
import TactusAnalysis
import TactusDetector

/// `--set`: parameters given to the built-in detectors of a benchmark in place of their
/// defaults, to measure a change before making it the default.
struct DetectorSettingsOption: ParsableArguments {
    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "A parameter given to every detector that declares it, as name=number, or to one detector, as detector:name=number (repeatable; e.g. prior_octaves=0).",
            valueName: "name=value"))
    var settings: [String] = []

    /// One `--set`: the detector it is for (nil: every detector that declares the parameter),
    /// the parameter and its value.
    private struct Setting {
        var detector: String?
        var name: String
        var value: ParameterValue
    }

    func validate() throws {
        _ = try parsed()
    }

    private func parsed() throws -> [Setting] {
        try settings.map { setting in
            let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Double(parts[1]) else {
                throw ValidationError("--set \(setting): expected name=number or detector:name=number.")
            }
            let target = parts[0].split(separator: ":", maxSplits: 1).map(String.init)
            return Setting(detector: target.count == 2 ? target[0] : nil, name: target.last!, value: .number(value))
        }
    }

    /// Every built-in detector with its defaults, and the `--set` parameters meant for it.
    func analyzer() throws -> SongAnalyzer {
        let registry = BuiltinDetectors.registry
        let given = try parsed()
        return SongAnalyzer(detectors: try registry.descriptors.map { descriptor in
            var values: [String: ParameterValue] = [:]
            for setting in given where (setting.detector ?? descriptor.name) == descriptor.name && descriptor.parameter(setting.name) != nil {
                values[setting.name] = setting.value
            }
            return try registry.make(descriptor.name, parameters: ParameterSet(values))
        })
    }
}
