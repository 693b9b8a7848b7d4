import Foundation

/// The protocol's JSON Schemas (`protocol/schema/`) as a test checks output against them, with
/// python `jsonschema` (`protocol/validate_json_lines.py`).
public enum ReplySchema {
    static let protocolDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("protocol")

    /// What is wrong with `jsonLines` (one JSON value a line) against `part` (a JSON Pointer,
    /// empty for the whole body) of the reply schema of the command named `command`; nil when
    /// every line is what the schema allows.
    public static func problems(of jsonLines: String, command: String, part: String = "") throws -> String? {
        let directory = try TemporaryDirectory(prefix: "tactus-reply-schema")
        let lines = directory.file("lines.json")
        try Data(jsonLines.utf8).write(to: URL(fileURLWithPath: lines))
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = [
            "python3", protocolDirectory.appendingPathComponent("validate_json_lines.py").path,
            "reply.\(command).json" + (part.isEmpty ? "" : "#" + part), lines,
        ]
        let output = Pipe()
        check.standardOutput = output
        try check.run()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        return check.terminationStatus == 0 ? nil : report
    }
}
