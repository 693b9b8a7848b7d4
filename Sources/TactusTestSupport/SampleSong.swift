import TactusAudio
import TactusModel

/// The small song kept in the repository at `Tests/Fixtures/sample.ogg` (what `make run`
/// probes): 8 seconds of a four-on-the-floor drum loop at 120 BPM, mono, 44.1 kHz, Ogg Vorbis,
/// tagged. `TACTUS_REGENERATE_FIXTURES=1 swift test --filter SampleFixture` rewrites it.
public enum SampleSong {
    public static let bpm = 120.0
    public static let seconds = 8.0
    public static let sampleRate = 44100
    public static let tags = AudioTags(title: "Sample Loop (120 BPM)", artist: "Tactus", album: "Tactus Fixtures", genre: "Electronic", year: 2026)

    /// The Ogg Vorbis bytes of the sample song.
    public static func oggVorbis() throws(AudioFileWriter.Failure) -> [UInt8] {
        let signal = Synth.drumPattern(bpm: bpm, seconds: seconds, sampleRate: Double(sampleRate), pattern: .fourOnTheFloor)
        return try AudioFileWriter(.oggVorbis, tags: tags, compressionLevel: 0.6).encode([signal], sampleRate: sampleRate)
    }
}
