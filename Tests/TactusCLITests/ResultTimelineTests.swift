import Foundation
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// The sparklines of `tactus result` and `tactus plot --server`, against a fake frontend
/// whose `result` reply has windows and an envelope.
@Suite struct ResultTimelineTests {
    /// A 40 s song: the envelope doubles its energy every 10 s (4 values per second); comb-filter's
    /// windows (10 s, one every 5 s) climb from 100 to 130 BPM.
    static func server() throws -> FakeFrontend {
        try FakeFrontend { request in
            guard let result = request.body.request(ResultCommand.self) else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: request.body.command.name,
                    error: ErrorBody(code: .unknownCommand, message: "not in this fake"))])
            }
            guard result.song.hasPrefix("abababab") else {
                return .init(replies: [ClientReply(
                    requestID: request.requestID, command: "result", error: ErrorBody(code: .notFound, message: "unknown song \(result.song)"))])
            }
            let windows = (0..<7).map { i in
                AnalysisWindow(startS: Double(i) * 5, durationS: 10, energy: 0.1, bpm: 100 + Double(i) * 5, strength: 0.8)
            }
            let analysis = TempoAnalysis(
                descriptor: DetectorDescriptor(name: "comb-filter", version: "9", summary: "test", specific: []),
                params: ParameterSet(),
                output: DetectorOutput(
                    bpm: 115, confidence: 0.9, candidates: [TempoCandidate(bpm: 115, strength: 1)],
                    windows: result.windows == true ? windows : []),
                seconds: 0.5)
            let envelope: [Float]? = result.envelope == true ? (0..<160).map { Float(pow(2.0, Double($0 / 40))) / 8 } : nil
            return .init(replies: [ClientReply(requestID: request.requestID, .result(ResultResponse(
                song: SongID(String(repeating: "ab", count: 32))!, name: "climb.flac", durationS: 40, analyses: [analysis],
                consensus: ConsensusTempo(bpm: 115, detectors: ["comb-filter"]), envelopeHopS: envelope == nil ? nil : 0.25),
                envelope: envelope))])
        }
    }

    @Test func resultShowsSparklinesOfTheEnvelopeAndTheWindowTempi() throws {
        let server = try Self.server()
        defer { server.stop() }
        let run = try CLI.run(["result", String(repeating: "ab", count: 32), "--server", server.frontend])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("  over 0:40:"))
        // Not a terminal: 60 columns in all. Labels padded to "comb-filter".
        let envelope = try #require(lines.first { $0.hasPrefix("  envelope ") })
        let tempo = try #require(lines.first { $0.hasPrefix("  comb-filter  ") })
        #expect(envelope.hasSuffix("-9.0..0.0 dB"), "\(envelope)")
        #expect(tempo.hasSuffix("100.0..130.0 BPM"), "\(tempo)")
        // Not a terminal: 60 characters in all, so 22 columns of chart after the labels, both
        // charts starting in the same column.
        let envelopeChart = envelope.dropFirst(2 + 11 + 2).prefix(22).map(SparklineLevel.of)
        let tempoChart = tempo.dropFirst(2 + 11 + 2).prefix(22).map(SparklineLevel.of)
        #expect(envelope.dropFirst(2 + 11 + 2 + 22).hasPrefix("   -9.0") && tempo.dropFirst(2 + 11 + 2 + 22).hasPrefix("   100.0"))
        // Four levels of energy 3 dB apart: ▁, ▃, ▆ and █, rising.
        #expect(envelopeChart.first == 0 && envelopeChart.last == 7 && envelopeChart == envelopeChart.sorted())
        #expect(envelopeChart.contains(2) && envelopeChart.contains(5))
        // The tempo rises from the first column to the last.
        #expect(tempoChart.first == 0 && tempoChart.last == 7 && tempoChart == tempoChart.sorted())
        // The window listing stays behind --windows.
        #expect(!run.standardOutput.contains("strength"))
    }

    @Test func resultJSONHasNoSparklinesAndAsksForNoWindows() throws {
        let server = try Self.server()
        defer { server.stop() }
        let run = try CLI.run(["result", String(repeating: "ab", count: 32), "--server", server.frontend, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardOutput.contains("▁") && !run.standardOutput.contains("over 0:40"))
        guard let request = server.requests.last?.body.request(ResultCommand.self) else { Issue.record("no result request"); return }
        #expect(request.windows == nil && request.envelope == nil)
    }

    @Test func plotAsksTheServerForWindowsAndEnvelope() throws {
        let server = try Self.server()
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-plot-\(UUID().uuidString).svg").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try CLI.run(["plot", "abababab", "--server", server.frontend, "-o", directory, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(summary["source"] as? String == "server" && summary["detectors"] as? [String] == ["comb-filter"])
        let svg = try String(contentsOfFile: directory, encoding: .utf8)
        #expect(svg.contains("climb.flac") && svg.contains(#"data-detector="comb-filter""#) && svg.contains(#"class="envelope""#))
        guard let request = server.requests.last?.body.request(ResultCommand.self) else { Issue.record("no result request"); return }
        #expect(request.windows == true && request.envelope == true)

        let unknown = try CLI.run(["plot", "cdcdcdcd", "--server", server.frontend, "-o", directory])
        #expect(unknown.status == 1 && unknown.standardError.contains("unknown song cdcdcdcd"), "\(unknown.standardError)")
    }
}

/// The level (0 for ▁ to 7 for █) of a sparkline character, -1 for anything else.
enum SparklineLevel {
    static func of(_ character: Character) -> Int {
        Array("▁▂▃▄▅▆▇█").firstIndex(of: character) ?? -1
    }
}
