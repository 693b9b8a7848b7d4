import Foundation
import TactusModel

/// Why a figure could not be written.
public enum PlotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The output's name ends neither in `.svg` nor in `.png`.
    case unsupportedFormat(path: String)
    /// The program that turns SVG into PNG is not installed.
    case converterMissing(tool: String, package: String)
    /// The converter ran and failed.
    case conversionFailed(tool: String, status: Int32, message: String)
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let path):
            return "cannot write '\(path)': the file name must end in .svg or .png"
        case .converterMissing(let tool, let package):
            return "writing PNG needs \(tool), which is not on the PATH; install the Debian package \(package) "
                + "(`make deps` does) or write an .svg file instead"
        case .conversionFailed(let tool, let status, let message):
            return "\(tool) failed (exit status \(status))" + (message.isEmpty ? "" : ": \(message)")
        case .cannotWrite(let path, let reason):
            return "cannot write '\(path)': \(reason)"
        }
    }
}

/// A figure's output file: SVG written as is, PNG converted from the SVG by `rsvg-convert`
/// (Debian package `librsvg2-bin`) run as a separate process.
public struct ImageFile: Sendable, Hashable {
    public enum Format: String, Sendable, Hashable, Codable {
        case svg, png
    }

    public let path: String
    public let format: Format

    /// The tool that converts SVG to PNG, and the package that provides it.
    public static let converter = (tool: "rsvg-convert", package: "librsvg2-bin")

    /// The file at `path`, its format told by its extension (`.svg` or `.png`, any case).
    public init(path: String) throws(PlotError) {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "svg": format = .svg
        case "png": format = .png
        default: throw .unsupportedFormat(path: path)
        }
        self.path = path
    }

    /// Writes `document` (replacing a regular file at the path; never a directory, device,
    /// FIFO or socket: ``TactusModel/OutputPath``).
    public func write(_ document: SVGDocument) throws(PlotError) {
        if let refusal = OutputPath.refusal(path) { throw .cannotWrite(path: path, reason: refusal) }
        let svg = Data(document.render().utf8)
        switch format {
        case .svg:
            try Self.write(svg, to: path)
        case .png:
            guard let tool = Self.converterPath() else {
                throw .converterMissing(tool: Self.converter.tool, package: Self.converter.package)
            }
            // Convert next to the output, then rename: a failed run never leaves half a PNG.
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            let stem = "\(directory)/.\(URL(fileURLWithPath: path).lastPathComponent).\(UUID().uuidString)"
            let input = stem + ".svg", output = stem + ".png"
            defer {
                try? FileManager.default.removeItem(atPath: input)
                try? FileManager.default.removeItem(atPath: output)
            }
            try Self.write(svg, to: input)
            try Self.run(tool, ["--format=png", "--background-color=white", "--output=\(output)", input])
            do {
                if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
                try FileManager.default.moveItem(atPath: output, toPath: path)
            } catch {
                throw .cannotWrite(path: path, reason: error.localizedDescription)
            }
        }
    }

    /// The converter's full path when it is installed: searched on `PATH`.
    public static func converterPath() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(converter.tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static func write(_ data: Data, to path: String) throws(PlotError) {
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw .cannotWrite(path: path, reason: (error as NSError).localizedFailureReason ?? error.localizedDescription)
        }
    }

    /// Runs the converter, its standard error collected through a temporary file (no pipe to fill).
    private static func run(_ tool: String, _ arguments: [String]) throws(PlotError) {
        let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-rsvg-\(UUID().uuidString).err").path
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        do {
            guard FileManager.default.createFile(atPath: errorPath, contents: nil) else {
                throw PlotError.cannotWrite(path: errorPath, reason: "cannot create a temporary file")
            }
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
            process.standardOutput = FileHandle.nullDevice
            try process.run()
        } catch let error as PlotError {
            throw error
        } catch {
            throw .conversionFailed(tool: converter.tool, status: -1, message: error.localizedDescription)
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw .conversionFailed(
                tool: converter.tool, status: process.terminationStatus,
                message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
