import ArgumentParser
import Foundation
import TactusAnalysis
import TactusClient
import TactusDetector
import TactusProtocol

extension Tactus {
    /// `tactus detectors`: the built-in detectors, their versions and parameters.
    struct Detectors: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "detectors",
            abstract: "List the tempo detectors with their versions and parameters.",
            discussion: """
                For each detector: its name, version and description, then each parameter with \
                the values it accepts, its default and its value in other presets. Set parameters \
                with `tactus analyze --param NAME.KEY=VALUE`.

                Without --server, the detectors built into this program. With --server, those the \
                server's connected workers offer (external workers included), with the number of \
                workers and of queued jobs of each.

                With --json, one JSON object per detector and per line, with the fields name, \
                version, summary and parameters (array of {name, accepts, default, presets, \
                summary}), advisory (true for a detector that does not vote in the consensus and \
                runs only when named), and with --server also workers and queued.
                """
        )

        @Flag(help: "Print one JSON object per detector and per line (JSON Lines).")
        var json = false

        @Option(help: ArgumentHelp("Ask this coordinator's frontend instead of listing the built-in detectors.", valueName: "endpoint"))
        var server: String?

        @Option(help: ArgumentHelp("With --server: seconds to wait for an answer.", valueName: "seconds"))
        var timeout = 2.5

        @OptionGroup var curve: CurveClientOptions

        func run() throws {
            var listings = BuiltinDetectors.registry.descriptors.map { DetectorListing($0) }
            if let server {
                let client = try TactusClient(
                    server: server, timeout: .milliseconds(Int64((timeout * 1000).rounded())), curve: curve.keys())
                listings = try client.detectors().detectors.map(DetectorListing.init)
            }
            for listing in listings {
                if json { print(jsonLine: listing.jsonLine()) } else { print(lines: listing.lines()) }
            }
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
    /// True for an advisory detector (no vote in the consensus, runs only when named); absent otherwise.
    var advisory: Bool?
    /// With `--server`: the connected workers offering the detector.
    var workers: Int?
    /// With `--server`: the jobs waiting for it.
    var queued: Int?

    /// A detector a server's workers offer.
    init(_ offered: OfferedDetector) {
        let info = offered.detector
        name = info.name
        version = info.version
        summary = info.summary
        parameters = info.parameters.map { declaration in
            // The server checked the declarations when the worker announced them.
            let accepts = (try? declaration.spec(field: declaration.name, command: "detectors"))?.kind.acceptedValues ?? declaration.kind
            return Parameter(
                name: declaration.name, accepts: accepts, default: declaration.default, presets: declaration.presets,
                summary: declaration.summary)
        }
        advisory = info.advisory == true ? true : nil
        workers = offered.workers
        queued = offered.queued
    }

    init(_ descriptor: DetectorDescriptor) {
        name = descriptor.name
        version = descriptor.version
        summary = descriptor.summary
        parameters = descriptor.parameters.map {
            Parameter(
                name: $0.name, accepts: $0.kind.acceptedValues, default: $0.defaultValue, presets: $0.presetValues,
                summary: $0.summary)
        }
        advisory = descriptor.advisory ? true : nil
    }

    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, finite numbers and arrays of them always encode.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func lines() -> [String] {
        var lines = ["\(name) \(version)\(advisory == true ? " (advisory: no vote in the consensus, runs when named)" : ""): \(summary)"]
        if let workers, let queued { lines[0] += "  [\(workers) worker\(workers == 1 ? "" : "s"), \(queued) queued]" }
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
        return lines
    }
}
