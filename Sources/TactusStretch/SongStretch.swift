import Foundation
import TactusAnalysis
import TactusAudio
import TactusModel

/// A song rendered at a target tempo: its tempo found by the built-in detectors (or given),
/// the octave that needs the least change (a song at 85 BPM serves 170), then stretched by
/// ``TimeStretcher`` and written as a mono 16-bit WAV file.
public struct SongStretch: Sendable, Hashable, Codable {
    public var file: String
    public var output: String
    /// The song's tempo, found or given.
    public var sourceBPM: Double
    /// 0.5, 1 or 2: the song's tempo is taken at this multiple.
    public var factor: Double
    public var targetBPM: Double
    /// How much faster the output plays than the song: target / (source × factor).
    public var tempoRatio: Double
    public var inputSeconds: Double
    public var outputSeconds: Double
    /// Seconds spent stretching (decoding and analysis excluded).
    public var stretchSeconds: Double

    enum CodingKeys: String, CodingKey {
        case file, output, sourceBPM = "source_bpm", factor, targetBPM = "target_bpm", tempoRatio = "tempo_ratio"
        case inputSeconds = "input_s", outputSeconds = "output_s", stretchSeconds = "stretch_s"
    }

    /// Renders `file` at `targetBPM` into `output` (a WAV file), and puts it in place.
    /// `sourceBPM` skips the analysis; `maxStretch` (a fraction) bounds the change of tempo.
    public static func render(
        _ file: String, targetBPM: Double, output: OutputFile, sourceBPM: Double? = nil, maxStretch: Double = 0.08,
        engine: TimeStretcher.Engine = .faster
    ) throws(StretchError) -> SongStretch {
        let decoded: DecodedAudio
        do throws(AudioError) {
            decoded = try DecodedAudio(decoding: .file(file))
        } catch {
            throw .unreadable(file: file, message: error.description)
        }
        let tempo: Double
        if let sourceBPM {
            tempo = sourceBPM
        } else {
            let analysis = SongAnalyzer.builtin().analyze(.file(file))
            if let error = analysis.error { throw .unreadable(file: file, message: error.message) }
            guard let found = analysis.consensus.bpm else { throw .noTempo(file: file) }
            tempo = found
        }
        let change = TempoChange(from: tempo, to: targetBPM)
        let factor = change.factor, ratio = change.tempoRatio
        guard change.isWithin(maxStretch) else {
            throw .tooFar(file: file, bpm: tempo, target: targetBPM, maxStretch: maxStretch)
        }
        let sampleRate = decoded.metadata.sampleRate
        let start = Date()
        let stretched = TimeStretcher.stretch(decoded.samples, sampleRate: sampleRate, tempoRatio: ratio, engine: engine)
        let seconds = Date().timeIntervalSince(start)
        let writer = try WAVWriter(into: output, sampleRate: sampleRate)
        try writer.write(stretched[...])
        try writer.close()
        try output.place()
        return SongStretch(
            file: file, output: output.path, sourceBPM: tempo, factor: factor, targetBPM: targetBPM, tempoRatio: ratio,
            inputSeconds: Double(decoded.samples.count) / Double(sampleRate),
            outputSeconds: Double(stretched.count) / Double(sampleRate), stretchSeconds: seconds)
    }
}
