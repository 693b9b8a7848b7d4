import Foundation
import Testing
import TactusProtocol

/// The JSON Schemas in `protocol/schema/` describe exactly what the Swift encoder writes:
/// every example body is validated with python `jsonschema` (protocol/validate_examples.py).
@Suite("JSON Schemas") struct SchemaTests {
    static let protocolDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol")

    /// Every example body, named by its schema.
    static func exampleBodies() throws -> [(schema: String, body: [UInt8])] {
        var bodies: [(String, [UInt8])] = []
        for request in Examples.requests {
            bodies.append(("request.\(request.body.command.name)", try request.frames()[3]))
        }
        for response in Examples.responses {
            bodies.append(("reply.\(response.command.name)", try ClientReply(requestID: [], response).frames()[4]))
        }
        bodies.append(("reply.error", try ClientReply(requestID: [], command: "submit", error: Examples.error).frames()[4]))
        bodies.append(("reply.error", try RequestRejection(
            requestID: [], command: "status",
            error: .unsupportedVersion(received: "TACTUS9", supported: ["TACTUS1", "TACTUS2"])).reply.frames()[4]))
        // Version 2's own bodies (READY, JOB, RESULT) have their own schemas, backend.v2.<COMMAND>.
        for message in Examples.workerMessages {
            let prefix = message.requiredVersion == .v2 ? "backend.v2." : "backend."
            bodies.append(("\(prefix)\(message.command.rawValue)", try message.frames()[2]))
        }
        for message in Examples.coordinatorMessages {
            let prefix = message.requiredVersion == .v2 ? "backend.v2." : "backend."
            bodies.append(("\(prefix)\(message.command.rawValue)", try message.frames()[2]))
        }
        for event in Examples.events {
            bodies.append(("event.\(event.name.rawValue)", try event.frames()[3]))
        }
        return bodies
    }

    /// The protocol's table of commands, its schemas and its examples agree: each command has a
    /// request and a reply schema, each request or reply schema is a command's, and the examples
    /// (validated against the schemas below) have a request and an answer of every command.
    @Test func everyCommandOfTheTableHasItsSchemasAndExamplesAndEverySchemaItsCommand() throws {
        let table = Set(ClientCommands.standard.names)
        #expect(table.count == ClientCommands.standard.names.count)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.protocolDirectory.appendingPathComponent("schema").path)
        func commands(_ kind: String) -> Set<String> {
            Set(files.filter { $0.hasPrefix(kind + ".") && $0.hasSuffix(".json") }.map { String($0.dropFirst(kind.count + 1).dropLast(5)) })
        }
        #expect(commands("request") == table)
        #expect(commands("reply").subtracting(["error"]) == table)
        #expect(Set(Examples.requests.map { $0.body.command.name }) == table)
        #expect(Set(Examples.responses.map { $0.command.name }) == table)
    }

    private func write(_ bodies: [(schema: String, body: [UInt8])]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (index, example) in bodies.enumerated() {
            try Data(example.body).write(to: directory.appendingPathComponent("\(example.schema)--\(index).json"))
        }
        return directory
    }

    private func validate(_ directory: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.protocolDirectory.appendingPathComponent("validate_examples.py").path, "--require-all", directory.path,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func everyExampleBodyMatchesItsSchemaAndEverySchemaHasAnExample() throws {
        let directory = try write(try Self.exampleBodies())
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try validate(directory)
        #expect(status == 0, "\(output)")
        #expect(output.contains("0 problems"))
    }

    @Test func theSchemasRejectBodiesThatBreakThem() throws {
        var bodies = try Self.exampleBodies()
        bodies.append(("request.query", Array(#"{"min_bpm":"fast","max_bpm":130}"#.utf8)))
        bodies.append(("backend.RESULT", Array(#"{"job":1,"attempt":1}"#.utf8)))
        bodies.append(("event.job.done", Array(#"{"job":1,"song":"ab","detector":"comb-filter","bpm":null,"confidence":0,"extra":1}"#.utf8)))
        // The library bodies' rules that are not about types: exclusive and conditional fields.
        bodies.append(("request.query", Array(#"{"min_bpm":120,"max_bpm":130,"detector":"comb-filter","agree":2}"#.utf8)))
        bodies.append(("request.playlist", Array(#"{"minutes":30}"#.utf8)))
        bodies.append(("reply.compare", Array("{}".utf8)))
        bodies.append(("reply.truth", Array(#"{"song":"ab","reference":{"song":"ab","bpm":128,"source":"manual","set_at":785246400}}"#.utf8)))
        bodies.append(("request.tags", Array(#"{"action":"read","songs":["3f9a3f9a"],"all":true}"#.utf8)))
        bodies.append(("request.tags", Array(#"{"action":"read","all":true,"dry_run":true}"#.utf8)))
        bodies.append(("reply.resolve", Array(#"{"songs":[{"name":"a.mp3","song":"\#(Examples.song)","problem":{"code":"not-found","message":"x"}}]}"#.utf8)))
        bodies.append(("backend.v2.IDENTIFIED", Array(#"{"request":1,"files":[{"sha256":"\#(Examples.song)","size":1,"mtime_ns":2,"error":{"code":"internal","message":"x"}}]}"#.utf8)))
        let directory = try write(bodies)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try validate(directory)
        #expect(status == 1)
        #expect(output.contains("11 problems"), "\(output)")
        for schema in [
            "request.query", "backend.RESULT", "event.job.done", "request.playlist", "reply.compare", "reply.truth", "request.tags", "reply.resolve",
            "backend.v2.IDENTIFIED",
        ] {
            #expect(output.contains("\(schema)--"), "\(schema) in \(output)")
        }
    }
}
