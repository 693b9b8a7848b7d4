/// Synthesised songs as the bytes of an audio file (mono, 22.05 kHz WAV unless told
/// otherwise), for the tests that submit, store or analyse songs.
///
/// ```swift
/// let bytes = try TestSong.clickTrack(bpm: 120, seconds: 6)
/// ```
public enum TestSong {
    /// A click track (``Synth/clickTrack(bpm:seconds:sampleRate:endBPM:accentEvery:)``).
    public static func clickTrack(
        bpm: Double, seconds: Double, sampleRate: Int = 22_050, format: AudioFileWriter.Format = .wav16
    ) throws -> [UInt8] {
        let signal = Synth.clickTrack(bpm: bpm, seconds: seconds, sampleRate: Double(sampleRate))
        return try AudioFileWriter(format).encode([signal], sampleRate: sampleRate)
    }

    /// A drum pattern (``Synth/drumPattern(bpm:seconds:sampleRate:pattern:endBPM:seed:)``).
    public static func drumPattern(
        bpm: Double, seconds: Double, sampleRate: Int = 22_050, format: AudioFileWriter.Format = .wav16
    ) throws -> [UInt8] {
        let signal = Synth.drumPattern(bpm: bpm, seconds: seconds, sampleRate: Double(sampleRate))
        return try AudioFileWriter(format).encode([signal], sampleRate: sampleRate)
    }
}
