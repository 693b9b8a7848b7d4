import Foundation
import TactusTestSupport
import Testing

/// `tactus cadence --server`: the recording's bytes analysed by `tactus serve`, printed as offline.
@Suite struct CadenceOverServerTests {
    @Test func theServerAnswersLikeTheCommandOffline() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-cadence-server")
        let data = directory.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        var synth = StepRecordingSynth(stretches: [.init(seconds: 30, from: 150), .init(seconds: 20, from: 0)])
        synth.seed = 51
        let run = directory.file("run.csv")
        try Data(synth.render().csv(.physicsToolbox).utf8).write(to: URL(fileURLWithPath: run))
        let bad = directory.file("bad.csv")
        try Data("time,gFx,gFy,gFz,TgF\n0,0,0,1,1\n".utf8).write(to: URL(fileURLWithPath: bad))

        // Larger than a frame: sent as an upload.
        var long = StepRecordingSynth(stretches: [.init(seconds: 400, from: 160), .init(seconds: 200, from: 175)])
        long.seed = 52
        let longRun = directory.file("long run.csv")
        try Data(long.render().csv(.physicsToolbox).utf8).write(to: URL(fileURLWithPath: longRun))
        #expect(try FileManager.default.attributesOfItem(atPath: longRun)[.size] as? Int ?? 0 > 1 << 20)

        let server = try ServeProcess(dataDirectory: data, extraArguments: ["--no-local-workers"])
        for file in [run, longRun] {
            for format in [["--json"], []] {
                let offline = try CLI.run(["cadence", file] + format)
                let online = try CLI.run(["cadence", file, "--server", server.endpoints.frontend] + format)
                #expect(offline.status == 0 && online.status == 0, "\(online.standardError)")
                #expect(online.standardOutput == offline.standardOutput)
                if format == ["--json"] {
                    #expect(try ReplySchema.problems(of: online.standardOutput, command: "cadence") == nil)
                }
            }
        }
        let refused = try CLI.run(["cadence", bad, "--server", server.endpoints.frontend, "--json"])
        #expect(refused.status == 1)
        let error = try #require(refused.jsonLines.first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "bad-recording")
        #expect(error["message"] as? String == "\(bad): too few samples: 1 over 0 s; at least 10 s of samples are needed")
    }
}
