import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusTestSupport

/// Synthesised songs written through libsndfile and analysed back from the file, as real
/// songs are.
enum TestSongs {
    /// Writes `channels` to a file of `format` and analyses it with `detectors` (every built-in
    /// detector with default parameters when nil).
    static func analyze(
        _ channels: [[Float]], sampleRate: Int, format: AudioFileWriter.Format = .wav16,
        detectors: [any TempoDetector]? = nil
    ) throws -> SongAnalysis {
        let directory = try TemporaryDirectory(prefix: "tactus-analysis-test")
        let path = directory.file("song")
        try AudioFileWriter(format).write(channels, sampleRate: sampleRate, to: path)
        return (detectors.map { SongAnalyzer(detectors: $0) } ?? SongAnalyzer.builtin()).analyze(.file(path))
    }

    /// The comb filter with `preset` and optional extra parameters.
    static func combFilter(_ preset: String = "default", _ extra: [String: ParameterValue] = [:]) throws -> any TempoDetector {
        var given = ParameterSet(extra)
        given["preset"] = .text(preset)
        return try BuiltinDetectors.registry.make("comb-filter", parameters: given)
    }
}
