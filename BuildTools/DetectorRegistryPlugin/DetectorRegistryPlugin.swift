import Foundation
import PackagePlugin

/// Generates `BuiltinDetectors.swift` for the target it is applied to (TactusAnalysis): a
/// registry of the target's dependencies that live in a folder under `Plugins/`, in the order
/// the target lists them, which is the order of `builtinDetectors` in `Package.swift`. Each
/// such target `NAMEDetector` declares a type `NAMEDetector` conforming to `TempoDetector`.
@main
struct DetectorRegistryPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let detectors = target.dependencies.compactMap { dependency -> String? in
            guard case .target(let module) = dependency,
                module.directoryURL.deletingLastPathComponent().lastPathComponent == "Plugins"
            else { return nil }
            return module.name
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "BuiltinDetectors.swift")
        return [
            .buildCommand(
                displayName: "Generating the registry of \(detectors.count) built-in detectors",
                executable: try context.tool(named: "tactus-detector-registry").url,
                arguments: [output.path] + detectors,
                outputFiles: [output])
        ]
    }
}
