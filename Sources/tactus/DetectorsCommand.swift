import ArgumentParser
import Foundation
import TactusAnalysis
import TactusDetector

/// `tactus detectors`: the built-in detectors, their versions and parameters.
struct Detectors: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detectors",
        abstract: "List the tempo detectors with their versions and parameters.",
        discussion: """
            For each detector: its name, version and description, then each parameter with \
            the values it accepts, its default and its value in other presets. Set parameters \
            with `tactus analyze --param NAME.KEY=VALUE`.

            With --json, one JSON object per detector and per line, with the fields name, \
            version, summary and parameters (array of {name, accepts, default, presets, summary}).
            """
    )

    @Flag(help: "Print one JSON object per detector and per line (JSON Lines).")
    var json = false

    func run() throws {
        for descriptor in BuiltinDetectors.registry.descriptors {
            print(json ? DetectorListing(descriptor).jsonLine() : DetectorListing(descriptor).text())
        }
    }
}

/// One detector as `tactus detectors` shows it.
struct DetectorListing: Encodable {
    struct Parameter: Encodable {
        var name: String
        var accepts: String
        var `default`: ParameterValue
        var presets: [String: ParameterValue]
        var summary: String
    }

    var name: String
    var version: String
    var summary: String
    var parameters: [Parameter]

    init(_ descriptor: DetectorDescriptor) {
        name = descriptor.name
        version = descriptor.version
        summary = descriptor.summary
        parameters = descriptor.parameters.map {
            Parameter(
                name: $0.name, accepts: $0.kind.acceptedValues, default: $0.defaultValue, presets: $0.presetValues,
                summary: $0.summary)
        }
    }

    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, finite numbers and arrays of them always encode.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func text() -> String {
        var lines = ["\(name) \(version): \(summary)"]
        let width = parameters.map(\.name.count).max() ?? 0
        for parameter in parameters {
            var line = "  " + parameter.name.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  default=\(parameter.default)"
            for (preset, value) in parameter.presets.sorted(by: { $0.key < $1.key }) {
                line += "  \(preset)=\(value)"
            }
            lines.append(line)
            lines.append("  " + String(repeating: " ", count: width) + "  \(parameter.summary); \(parameter.accepts)")
        }
        return lines.joined(separator: "\n")
    }
}
