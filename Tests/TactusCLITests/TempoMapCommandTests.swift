import Foundation
import TactusTestSupport
import Testing

/// `analyze`, `result` and `query --stable/--changing` with a library file: a song that keeps
/// its tempo and one that steps from 100 to 130 BPM, synthesised and written through libsndfile.
@Suite struct TempoMapCommandTests {
    @Test func theTempoMapIsShownStoredAndQueried() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-tempo-map")
        let steady = directory.file("steady.wav"), stepping = directory.file("stepping.wav")
        try AudioFileWriter(.wav16).write([Synth.drumPattern(seconds: 60, sampleRate: 22_050) { _ in 120 }], sampleRate: 22_050, to: steady)
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(seconds: 60, sampleRate: 22_050) { $0 < 30 ? 100 : 130 }], sampleRate: 22_050, to: stepping)
        let database = directory.file("lib.sqlite")

        let analyzed = try CLI.run(["analyze", steady, stepping, "--db", database])
        #expect(analyzed.status == 0, "\(analyzed.standardError)")
        #expect(analyzed.standardOutput.contains("tempo: steady, "), "\(analyzed.standardOutput)")
        #expect(analyzed.standardOutput.contains("tempo changes: 0:00-0:"), "\(analyzed.standardOutput)")

        let result = try CLI.run(["result", "stepping.wav", "--json", "--db", database])
        let map = try #require((result.jsonLines.first?["consensus"] as? [String: Any])?["tempo_map"] as? [String: Any], "\(result.standardOutput)")
        #expect(map["stable"] as? Bool == false && (map["segments"] as? [Any])?.count == 2)

        func found(_ flag: String) throws -> [String] {
            let run = try CLI.run(["query", "--bpm", "20..400", flag, "--json", "--db", database])
            #expect(run.status == 0, "\(run.standardError)")
            return run.jsonLines.compactMap { $0["file"] as? String }
        }
        #expect(try found("--stable") == ["steady.wav"])
        #expect(try found("--changing") == ["stepping.wav"])
        let both = try CLI.run(["query", "--bpm", "20..400", "--stable", "--changing", "--db", database])
        #expect(both.status != 0 && both.standardError.contains("--stable and --changing are alternatives"))
    }
}
