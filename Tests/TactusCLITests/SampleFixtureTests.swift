import Foundation
import TactusTestSupport
import Testing

/// The song kept in the repository for `make run`.
@Suite struct SampleFixtureTests {
    @Test func sampleFixtureIsTheSynthesisedDrumLoop() throws {
        let path = CLI.repositoryRoot + "/Tests/Fixtures/sample.ogg"
        if ProcessInfo.processInfo.environment["TACTUS_REGENERATE_FIXTURES"] == "1" {
            try Data(SampleSong.oggVorbis()).write(to: URL(fileURLWithPath: path))
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size < 100_000)
        let result = try CLI.run(["probe", "--json", path])
        #expect(result.status == 0)
        let report = try #require(result.jsonLines.first)
        #expect(report["format"] as? String == "ogg")
        #expect(report["codec"] as? String == "vorbis")
        #expect(report["sample_rate"] as? Int == SampleSong.sampleRate)
        #expect(report["channels"] as? Int == 1)
        #expect(abs((report["duration_s"] as? Double ?? 0) - SampleSong.seconds) < 0.01)
        #expect(report["title"] as? String == SampleSong.tags.title)
        #expect(report["artist"] as? String == SampleSong.tags.artist)
        #expect(report["album"] as? String == SampleSong.tags.album)
    }
}
