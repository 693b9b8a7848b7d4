import Foundation
import TactusAudio
import TactusModel
import TactusTestSupport
import Testing

/// Hostile input gets an answer: no crash, no hang, no unbounded allocation.
@Suite struct PathologicalInputTests {
    func code(_ source: AudioSource) -> ErrorCode? {
        do throws(AudioError) {
            _ = try AudioStream(source).readToEnd()
            return nil
        } catch {
            return error.code
        }
    }

    @Test func twoBytes() {
        #expect(code(.bytes([0xFF, 0xFB], name: "tiny.mp3")) == .unsupportedFormat)
    }

    @Test func zeroLengthFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("zero.wav")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        #expect(code(.file(path)) == .empty)
    }

    @Test func tenMegabytesOfRandomBytesNamedMP3() throws {
        var generator = SeededGenerator(seed: 99)
        var bytes = [UInt8](repeating: 0, count: 10 << 20)
        for index in stride(from: 0, to: bytes.count, by: 8) {
            withUnsafeBytes(of: generator.next()) { word in
                for offset in 0..<8 { bytes[index + offset] = word[offset] }
            }
        }
        let directory = try TemporaryDirectory()
        let path = directory.file("random.mp3")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(code(.file(path)) == .unsupportedFormat)
        #expect(code(.bytes(bytes, name: "random.mp3")) == .unsupportedFormat)
        // An ID3v2 tag in front (claiming 256 MB) does not change the answer.
        let tagged = Array("ID3".utf8) + [3, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + bytes.prefix(1 << 20)
        #expect(code(.bytes(tagged, name: "tagged.mp3")) == .unsupportedFormat)
    }

    @Test func wavHeaderClaimingFourGigabytes() throws {
        var bytes = try AudioFileWriter(.wav16).encode([Synth.sine(hz: 440, seconds: 0.05, sampleRate: 44100)], sampleRate: 44100)
        let data = try #require(bytes.indices.first { bytes[$0..<$0 + 4].elementsEqual("data".utf8) })
        for offset in 0..<4 { bytes[data + 4 + offset] = 0xFF }
        bytes[data + 4] = 0xF0
        for offset in 0..<4 { bytes[4 + offset] = 0xFF }
        #expect(code(.bytes(bytes, name: "huge.wav")) == .truncated)
    }

    /// A WAV header declaring 0 Hz or no channels is corrupt, and the message says which
    /// (libsndfile itself says only "SF_INFO struct incomplete").
    @Test(arguments: [(channels: 1, rate: 0), (channels: 0, rate: 44100)])
    func wavHeaderDeclaringNothingToPlay(declared: (channels: Int, rate: Int)) throws {
        var bytes = try AudioFileWriter(.wav16).encode([Synth.sine(hz: 440, seconds: 1, sampleRate: 44100)], sampleRate: 44100)
        let fmt = try #require(bytes.indices.first { bytes[$0..<$0 + 4].elementsEqual("fmt ".utf8) })
        for offset in 0..<2 { bytes[fmt + 10 + offset] = UInt8(truncatingIfNeeded: declared.channels >> (8 * offset)) }
        for offset in 0..<4 { bytes[fmt + 12 + offset] = UInt8(truncatingIfNeeded: declared.rate >> (8 * offset)) }
        let error = #expect(throws: AudioError.self) { try AudioStream(.bytes(bytes, name: "nothing.wav")).readToEnd() }
        #expect(error?.code == .corrupt)
        #expect(error?.description == "nothing.wav: corrupt audio data: the header declares \(declared.channels) channels at \(declared.rate) Hz")
    }

    /// A WAV of 7,000 samples declaring 1 Hz would be 7,000 s of audio, each second costing the
    /// detectors as much as a real song's (attack round 6); below 4,000 Hz a file is refused,
    /// saying its rate, and 4,000 Hz itself is taken.
    @Test(arguments: [1, 100, 3_999])
    func aSampleRateBelow4000HzIsRefused(rate: Int) throws {
        let bytes = try AudioFileWriter(.wav16).encode([Synth.sine(hz: 0.1, seconds: 7_000, sampleRate: Double(rate))], sampleRate: rate)
        let error = #expect(throws: AudioError.self) { try AudioStream(.bytes(bytes, name: "slow.wav")).readToEnd() }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.description.contains("a sample rate of \(rate) Hz; Tactus analyses audio sampled at 4000 Hz or more") == true)
    }

    /// An Ogg Vorbis stream of more than 8 channels is refused, saying so (a 1 MB file declaring
    /// 255 channels took 7 s to decode, attack round 7); 8 channels (7.1 sound) are taken.
    @Test func anOggStreamOfMoreThanEightChannelsIsRefused() throws {
        let tone = Synth.sine(hz: 440, seconds: 6, sampleRate: 22_050)
        let nine = try AudioFileWriter(.oggVorbis).encode(Array(repeating: tone, count: 9), sampleRate: 22_050)
        let error = #expect(throws: AudioError.self) { try AudioStream(.bytes(nine, name: "many.ogg")).readToEnd() }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.description.contains("an Ogg stream of 9 channels; Tactus analyses Ogg streams of at most 8") == true, "\(String(describing: error))")
        let eight = try AudioFileWriter(.oggVorbis).encode(Array(repeating: tone, count: 8), sampleRate: 22_050)
        #expect(code(.bytes(eight, name: "surround.ogg")) == nil)
    }

    @Test func aSampleRateOf4000HzIsTaken() throws {
        let bytes = try AudioFileWriter(.wav16).encode([Synth.sine(hz: 440, seconds: 6, sampleRate: 4_000)], sampleRate: 4_000)
        #expect(code(.bytes(bytes, name: "phone.wav")) == nil)
    }

    @Test func flacHeaderClaimingYears() throws {
        var bytes = try AudioFileWriter(.flac).encode([Synth.sine(hz: 440, seconds: 0.5, sampleRate: 44100)], sampleRate: 44100)
        // STREAMINFO's total sample count at its 36-bit maximum: 18 days at 44.1 kHz in 20 KB.
        bytes[21] |= 0x0F
        for index in 22...25 { bytes[index] = 0xFF }
        #expect(code(.bytes(bytes, name: "forever.flac")) == .tooShort)
    }

    @Test func mpegFrameHeadersAroundGarbage() {
        // Valid MPEG-1 Layer III headers (128 kb/s, 44.1 kHz: 417-byte frames) with random
        // bodies: recognised as MPEG, decoded or rejected, but answered.
        var generator = SeededGenerator(seed: 3)
        var bytes: [UInt8] = []
        for _ in 0..<2000 {
            bytes += [0xFF, 0xFB, 0x90, 0x64]
            bytes += (0..<413).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        }
        let answer = code(.bytes(bytes, name: "garbage-frames.mp3"))
        #expect(answer == nil || answer == .corrupt || answer == .truncated)
    }

    @Test func truncatedHeaders() throws {
        for format in [AudioFileWriter.Format.wav16, .flac, .oggVorbis, .aiff, .mp3(.constant)] {
            let bytes = try AudioFileWriter(format).encode([Synth.sine(hz: 440, seconds: 0.5, sampleRate: 44100)], sampleRate: 44100)
            for length in [4, 12, 40, 100] {
                let answer = code(.bytes(Array(bytes.prefix(length)), name: "stub"))
                #expect(answer != nil, "\(format) cut to \(length) bytes")
            }
        }
    }
}

/// Damaged copies of real files: a few bytes of each header changed at random.
@Suite struct MutatedHeaderTests {
    @Test(arguments: [AudioFileWriter.Format.wav16, .wavExtensible16, .aiff, .flac, .oggVorbis, .opus, .mp3(.variable)])
    func mutatedHeadersAreAnswered(format: AudioFileWriter.Format) throws {
        let original = try AudioFileWriter(format).encode([Synth.clickTrack(bpm: 120, seconds: 1, sampleRate: 48000)], sampleRate: 48000)
        var generator = SeededGenerator(seed: 21)
        for _ in 0..<60 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                bytes[Int.random(in: 0..<min(512, bytes.count), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do throws(AudioError) {
                let stream = try AudioStream(.bytes(bytes, name: "mutated"), options: DecodingOptions(minimumSeconds: 0.5))
                try stream.readToEnd()
                // One second of 16-bit audio cannot turn into more than two of output.
                #expect(stream.framesDecoded <= 48000 * 2)
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }
}
