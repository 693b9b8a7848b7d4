import TactusAudio
import TactusTestSupport

/// The audio fuzz target: one input is the bytes of a song, decoded by ``AudioStream`` to the
/// end, whatever format its content claims.
///
/// Decoding may refuse the bytes with an ``AudioError``; it must never trap, and what it
/// delivers must be sane: samples in [-1, 1], a positive sample rate and channel count, and
/// an exact duration equal to the samples delivered. A failed property stops the process
/// (`fatalError`), which libFuzzer records as a crash. Decoding is bounded by
/// ``options`` so that one input costs at most a minute of audio.
enum AudioFuzzer {
    static let options = DecodingOptions(minimumSeconds: 0.1, maximumSeconds: 60)

    /// Decodes `bytes`; returns the error code, or "ok".
    @discardableResult
    static func run(_ bytes: [UInt8]) -> String {
        do throws(AudioError) {
            let stream = try AudioStream(.bytes(bytes, name: "fuzz-input"), options: options)
            let metadata = stream.metadata
            check(metadata.sampleRate > 0 && metadata.channels > 0, "a positive sample rate and channel count", bytes)
            var frames = 0
            while try stream.readBlock({ block in
                frames += block.count
                for sample in block where !(sample >= -1 && sample <= 1) {
                    fail("a sample \(sample) outside [-1, 1]", bytes)
                }
            }) {}
            check(stream.isFinished && frames == stream.framesDecoded, "every sample delivered is counted", bytes)
            let duration = Double(frames) / Double(stream.metadata.sampleRate)
            check(stream.metadata.durationIsExact && abs(stream.metadata.duration - duration) < 1e-9, "the exact duration", bytes)
            check(duration <= options.maximumSeconds, "no more than the maximum duration", bytes)
            return "ok"
        } catch {
            check(!error.description.isEmpty && error.file == "fuzz-input", "an error names its input", bytes)
            return error.code.rawValue
        }
    }

    private static func check(_ condition: Bool, _ property: String, _ input: [UInt8]) {
        if !condition { fail("property failed: \(property)", input) }
    }

    private static func fail(_ message: String, _ input: [UInt8]) -> Never {
        fatalError("\(message); input of \(input.count) bytes")
    }

    /// The seed corpus: a short click track in every format Tactus writes, a few KB each.
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let rate = 11025
        let signal = Synth.clickTrack(bpm: 120, seconds: 0.6, sampleRate: Double(rate))
        // Opus takes a few sample rates only (8 kHz among them).
        let formats: [(String, AudioFileWriter.Format, Int)] = [
            ("pcm16.wav", .wav16, rate), ("float.wav", .wavFloat, rate), ("extensible.wav", .wavExtensible16, rate),
            ("pcm16.aiff", .aiff, rate), ("pcm16.flac", .flac, rate), ("vorbis.ogg", .oggVorbis, rate), ("opus.ogg", .opus, 8000),
            ("cbr.mp3", .mp3(.constant), rate), ("vbr.mp3", .mp3(.variable), rate),
        ]
        var seeds: [(String, [UInt8])] = []
        for (name, format, formatRate) in formats {
            let samples = formatRate == rate ? signal : Synth.clickTrack(bpm: 120, seconds: 0.6, sampleRate: Double(formatRate))
            seeds.append(("click-\(name)", try AudioFileWriter(format).encode([samples], sampleRate: formatRate)))
        }
        let stereo = Synth.sine(hz: 440, seconds: 0.6, sampleRate: Double(rate))
        seeds.append(("stereo-pcm16.wav", try AudioFileWriter(.wav16).encode([stereo, signal], sampleRate: rate)))
        return seeds
    }
}
