import Foundation
import TactusAudio
import TactusTestSupport
import Testing

/// `tactus playlist --render`: the playlist as one file, songs found under --music.
@Suite struct PlaylistRenderCommandTests {
    @Test func thePlaylistIsRenderedFromTheSongsUnderMusic() throws {
        let directory = try TemporaryDirectory()
        let music = directory.file("music")
        try FileManager.default.createDirectory(atPath: music + "/album", withIntermediateDirectories: true)
        let slow = music + "/album/slow.flac", fast = music + "/fast.wav"
        try AudioFileWriter(.flac).write([Synth.drumPattern(bpm: 84, seconds: 30, sampleRate: 22_050)], sampleRate: 22_050, to: slow)
        try AudioFileWriter(.wav16).write([Synth.drumPattern(bpm: 120, seconds: 30, sampleRate: 22_050)], sampleRate: 22_050, to: fast)
        let library = directory.file("library.sqlite")
        let analysed = try CLI.run(["analyze", slow, fast, "--db", library, "--json"])
        try #require(analysed.status == 0, "\(analysed.standardError)")

        let output = directory.file("workout.wav")
        let arguments = ["playlist", "--db", library, "--profile", "30s@170,30s@125", "--render", output, "--music", music]
        // By time, the file is the stretched songs less the crossfade.
        let run = try CLI.run(arguments + ["--json", "--crossfade-by-time"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.jsonLines.map { $0["file"] as? String } == ["slow.flac", "fast.wav"])
        #expect(run.standardError.contains("rendered \(output): 2 songs"))
        let rendered = try DecodedAudio(decoding: .file(output))
        let expected = run.jsonLines.reduce(-2.0) { total, line in
            total + 30 * (line["matched_bpm"] as? Double ?? 0) / (line["cadence"] as? Double ?? 1)
        }
        #expect(abs(Double(rendered.samples.count) / 22_050 - expected) < 0.1)

        // On beats (the default), the join leaves out less than a beat of each song: the rest of the
        // outgoing one after the crossfade, the start of the incoming one before its first beat.
        let onBeats = try CLI.run(arguments)
        #expect(onBeats.status == 0, "\(onBeats.standardError)")
        #expect(onBeats.standardOutput.contains("rendered \(output): 2 songs (1 of 1 joins on beats)"), "\(onBeats.standardOutput)")
        let seconds = Double(try DecodedAudio(decoding: .file(output)).samples.count) / 22_050
        #expect(seconds <= expected + 0.1 && seconds > expected - 60 / 170 - 60 / 125 - 0.1, "\(seconds) s for \(expected) s")

        // A song that is not there any more is an error naming it.
        try FileManager.default.removeItem(atPath: fast)
        let missing = try CLI.run(arguments)
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("(fast.wav) is not under \(music)"))
        let usage = try CLI.run(["playlist", "--db", library, "--cadence", "170", "--render", output])
        #expect(usage.status == 2)
        #expect(usage.standardError.contains("--render and --music go together"))
    }
}
