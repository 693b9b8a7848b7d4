import Foundation
import Testing
import TactusTestSupport

private func jsonObjects(_ lines: String) throws -> [[String: Any]] {
    try lines.split(separator: "\n").map { line in
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
}

@Suite struct AnalyzeCommandTests {
    @Test func jsonLinesHaveTheDocumentedShapeAndABadFileDoesNotStopTheOthers() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-cli-test")
        let song = directory.file("song.flac"), broken = directory.file("broken.mp3")
        try AudioFileWriter(.flac).write(
            [Synth.drumPattern(bpm: 120, seconds: 12, sampleRate: 22_050)], sampleRate: 22_050, to: song)
        #expect(FileManager.default.createFile(atPath: broken, contents: Data(repeating: 7, count: 5_000)))

        let run = try CLI.run(["analyze", broken, song, "--json", "--envelope", "--param", "comb-filter.hop_s=2"])
        #expect(run.status == 1)
        let objects = try jsonObjects(run.standardOutput)
        #expect(objects.count == 2)

        let failed = objects[0]
        #expect(failed["file"] as? String == broken)
        let error = try #require(failed["error"] as? [String: Any])
        #expect(error["code"] is String && error["message"] is String)
        #expect((failed["analyses"] as? [Any])?.isEmpty == true)

        let good = objects[1]
        #expect(Set(good.keys).isSuperset(of: ["file", "song", "duration_s", "error", "analyses", "envelope", "consensus"]))
        #expect(good["error"] is NSNull)
        #expect((good["song"] as? String)?.count == 64)
        #expect(abs((good["duration_s"] as? Double ?? 0) - 12) < 0.01)
        let envelope = try #require(good["envelope"] as? [String: Any])
        #expect(envelope["hop_s"] is Double && (envelope["values"] as? [Any])?.isEmpty == false)
        let consensus = try #require(good["consensus"] as? [String: Any])
        #expect(consensus["bpm"] is Double && consensus["detectors"] is [String])

        let analyses = try #require(good["analyses"] as? [[String: Any]])
        let comb = try #require(analyses.first { $0["detector"] as? String == "comb-filter" })
        #expect(Set(comb.keys).isSuperset(of: ["detector", "version", "params", "bpm", "confidence", "candidates", "windows", "seconds"]))
        #expect((comb["params"] as? [String: Any])?["hop_s"] as? Double == 2)
        let candidate = try #require((comb["candidates"] as? [[String: Any]])?.first)
        #expect(candidate["bpm"] is Double && candidate["strength"] is Double)
        let window = try #require((comb["windows"] as? [[String: Any]])?.first)
        #expect(Set(window.keys) == ["start_s", "duration_s", "energy", "bpm", "strength"])
    }

    @Test func theEnvelopeIsOnlyWrittenWhenAskedFor() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-cli-test")
        let song = directory.file("song.wav")
        try AudioFileWriter(.wav16).write([Synth.clickTrack(bpm: 100, seconds: 8, sampleRate: 22_050)], sampleRate: 22_050, to: song)
        let run = try CLI.run(["analyze", song, "--json", "--detector", "comb-filter"])
        #expect(run.status == 0)
        let object = try #require(try jsonObjects(run.standardOutput).first)
        #expect(object["envelope"] == nil)
        #expect((object["analyses"] as? [Any])?.count == 1)

        let table = try CLI.run(["analyze", song])
        #expect(table.status == 0)
        #expect(table.standardOutput.contains("comb-filter") && table.standardOutput.contains("consensus"))
    }

    @Test(arguments: [["--detector", "tap"], ["--param", "comb-filter.tempo=3"], ["--param", "comb-filter.min_bpm=5"],
                      ["--param", "preset=classic"], ["--param", "comb-filter.min_bpm=150", "--param", "comb-filter.max_bpm=100"]])
    func usageErrorsExitWithStatusTwo(arguments: [String]) throws {
        let run = try CLI.run(["analyze", "whatever.mp3"] + arguments)
        #expect(run.status == 2, "\(arguments): \(run.status) \(run.standardError)")
        #expect(!run.standardError.isEmpty)
    }

    @Test func detectorsAreListedWithTheirParameters() throws {
        let run = try CLI.run(["detectors", "--json"])
        #expect(run.status == 0)
        let comb = try #require(try jsonObjects(run.standardOutput).first { $0["name"] as? String == "comb-filter" })
        #expect(comb["version"] is String && comb["summary"] is String)
        let parameters = try #require(comb["parameters"] as? [[String: Any]])
        let preset = try #require(parameters.first { $0["name"] as? String == "preset" })
        #expect(preset["default"] as? String == "default")
        let bands = try #require(parameters.first { $0["name"] as? String == "band_edges_hz" })
        #expect((bands["presets"] as? [String: Any])?["classic"] is [Double])
        let text = try CLI.run(["detectors"])
        #expect(text.status == 0 && text.standardOutput.contains("comb-filter") && text.standardOutput.contains("window_s"))
    }
}
