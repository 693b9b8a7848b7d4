import Foundation
import TactusAudio
import TactusTestSupport
import Testing

/// Audio written through libsndfile (and LAME for MP3) reads back with the right shape
/// and the right signal, from a path and from memory alike.
@Suite struct RoundTripTests {
    static let losslessFormats: [AudioFileWriter.Format] = [.wav16, .wav24, .wavFloat, .wavDouble, .wavExtensible16, .aiff, .flac]
    static let sampleRates = [22050, 44100, 48000]

    @Test(arguments: losslessFormats, sampleRates)
    func losslessFormatsKeepTheSignal(format: AudioFileWriter.Format, sampleRate: Int) throws {
        for channels in [TestSignals.mono(seconds: 3, sampleRate: sampleRate), TestSignals.stereo(seconds: 3, sampleRate: sampleRate)] {
            let bytes = try AudioFileWriter(format).encode(channels, sampleRate: sampleRate)
            let decoded = try DecodedAudio(decoding: .bytes(bytes, name: "\(format).bin"), options: TestSignals.shortSongs)
            let expected = TestSignals.downmix(channels)
            #expect(decoded.metadata.sampleRate == sampleRate)
            #expect(decoded.metadata.channels == channels.count)
            #expect(decoded.samples.count == expected.count)
            #expect(decoded.metadata.duration == Double(expected.count) / Double(sampleRate))
            #expect(decoded.metadata.durationIsExact)
            #expect(decoded.warnings.isEmpty)
            #expect(TestSignals.correlation(expected, decoded.samples) > 0.99)
            let tolerance: Float = format == .wavFloat || format == .wavDouble ? 1e-6 : format == .wav24 ? 1e-5 : 1e-4
            #expect(TestSignals.maximumDifference(expected, decoded.samples) < tolerance)
        }
    }

    @Test func formatsAndCodecsAreNamed() throws {
        let expectations: [(AudioFileWriter.Format, AudioFormat, String)] = [
            (.wav16, .wav, "pcm-s16"), (.wav24, .wav, "pcm-s24"), (.wavFloat, .wav, "pcm-f32"),
            (.wavDouble, .wav, "pcm-f64"), (.wavExtensible16, .wav, "pcm-s16"), (.aiff, .aiff, "pcm-s16"),
            (.flac, .flac, "flac"), (.oggVorbis, .ogg, "vorbis"), (.opus, .ogg, "opus"),
            (.mp3(.constant), .mpeg, "mp3"), (.mp3(.variable), .mpeg, "mp3"),
        ]
        for (format, container, codec) in expectations {
            let bytes = try AudioFileWriter(format).encode(TestSignals.mono(seconds: 3, sampleRate: 48000), sampleRate: 48000)
            let stream = try AudioStream(.bytes(bytes, name: "\(format)"), options: TestSignals.shortSongs)
            #expect(stream.metadata.format == container, "\(format)")
            #expect(stream.metadata.codec == codec, "\(format)")
        }
    }

    @Test(arguments: [AudioFileWriter.Format.mp3(.constant), .mp3(.variable)], [22050, 44100, 48000])
    func mp3KeepsShapeAndDuration(format: AudioFileWriter.Format, sampleRate: Int) throws {
        for channels in [TestSignals.mono(seconds: 4, sampleRate: sampleRate), TestSignals.stereo(seconds: 4, sampleRate: sampleRate)] {
            // At LAME's lowest bitrates the first frame is too small for the LAME tag that
            // gives the exact length; a level of 0.2 keeps enough bits for it at 22.05 kHz.
            let bytes = try AudioFileWriter(format, compressionLevel: 0.2).encode(channels, sampleRate: sampleRate)
            let stream = try AudioStream(.bytes(bytes, name: "song.mp3"), options: TestSignals.shortSongs)
            #expect(stream.metadata.format == .mpeg)
            #expect(stream.metadata.codec == "mp3")
            #expect(stream.metadata.durationIsExact == false)
            let expectedFrames = try #require(stream.expectedFrames)
            #expect(abs(expectedFrames - channels[0].count) <= 1152)
            let decoded = try stream.readAll()
            #expect(decoded.metadata.sampleRate == sampleRate)
            #expect(decoded.metadata.channels == channels.count)
            #expect(abs(decoded.samples.count - channels[0].count) <= 1152, "within one MPEG frame")
            #expect(decoded.metadata.durationIsExact)
            #expect(decoded.warnings.isEmpty)
            #expect(try #require(decoded.metadata.bitrate) > 8000)
            // Lossy, but the same music: a high correlation once aligned.
            let expected = TestSignals.downmix(channels)
            #expect(TestSignals.bestCorrelation(expected, decoded.samples, maxLag: 32) > 0.9)
        }
    }

    /// MPEG-1, MPEG-2 and MPEG-2.5 Layer III at every sample rate they define.
    @Test(arguments: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000])
    func mp3AtEveryMPEGSampleRate(sampleRate: Int) throws {
        let channels = TestSignals.mono(seconds: 3, sampleRate: sampleRate)
        let bytes = try AudioFileWriter(.mp3(.variable)).encode(channels, sampleRate: sampleRate)
        let decoded = try DecodedAudio(decoding: .bytes(bytes, name: "rate.mp3"), options: TestSignals.shortSongs)
        #expect(decoded.metadata.sampleRate == sampleRate)
        #expect(abs(decoded.samples.count - channels[0].count) <= 1152)
    }

    @Test(arguments: [AudioFileWriter.Format.oggVorbis, .opus])
    func xiphCodecsInOgg(format: AudioFileWriter.Format) throws {
        let sampleRate = 48000
        let channels = TestSignals.stereo(seconds: 3, sampleRate: sampleRate)
        let bytes = try AudioFileWriter(format).encode(channels, sampleRate: sampleRate)
        let decoded = try DecodedAudio(decoding: .bytes(bytes, name: "song.ogg"), options: TestSignals.shortSongs)
        #expect(decoded.metadata.format == .ogg)
        #expect(decoded.metadata.sampleRate == sampleRate)
        #expect(decoded.metadata.channels == 2)
        #expect(abs(decoded.samples.count - channels[0].count) <= 1024)
        #expect(decoded.warnings.isEmpty)
        #expect(TestSignals.bestCorrelation(TestSignals.downmix(channels), decoded.samples, maxLag: 32) > 0.9)
    }

    @Test func pathAndMemoryDecodeIdentically() throws {
        let directory = try TemporaryDirectory()
        for format in [AudioFileWriter.Format.flac, .mp3(.variable), .oggVorbis] {
            let path = directory.file("song")  // no extension: recognition is by content
            let channels = TestSignals.stereo(seconds: 3, sampleRate: 44100)
            try AudioFileWriter(format).write(channels, sampleRate: 44100, to: path)
            let fromPath = try DecodedAudio(decoding: .file(path), options: TestSignals.shortSongs)
            let fromMemory = try DecodedAudio(decoding: .data(try Data(contentsOf: URL(fileURLWithPath: path)), name: "song"), options: TestSignals.shortSongs)
            #expect(fromPath.samples == fromMemory.samples, "\(format)")
            #expect(fromPath.metadata == fromMemory.metadata, "\(format)")
        }
    }

    @Test func multichannelIsTheAverageOfItsChannels() throws {
        let seconds = 3.0, rate = 44100
        let channels = (0..<6).map {
            Synth.sine(hz: 200 + 150 * Double($0), seconds: seconds, sampleRate: Double(rate), amplitude: 0.15 * Float($0 + 1) / 6)
        }
        for format in [AudioFileWriter.Format.wavFloat, .wavExtensible16, .flac] {
            let bytes = try AudioFileWriter(format).encode(channels, sampleRate: rate)
            let decoded = try DecodedAudio(decoding: .bytes(bytes, name: "6ch"), options: TestSignals.shortSongs)
            #expect(decoded.metadata.channels == 6)
            #expect(TestSignals.maximumDifference(TestSignals.downmix(channels), decoded.samples) < 1e-4, "\(format)")
        }
    }

    @Test func samplesAreClampedToUnitRange() throws {
        // Float WAV may hold values beyond full scale, even NaN; the decoded signal never does.
        var loud = Synth.sine(hz: 100, seconds: 3, sampleRate: 8000, amplitude: 3)
        loud[10] = .nan
        loud[11] = .infinity
        loud[12] = -.infinity
        let bytes = try AudioFileWriter(.wavFloat).encode([loud], sampleRate: 8000)
        let decoded = try DecodedAudio(decoding: .bytes(bytes, name: "loud.wav"), options: TestSignals.shortSongs)
        #expect(decoded.samples.max() == 1)
        #expect(decoded.samples.min() == -1)
        #expect(decoded.samples.count == loud.count)
        #expect(decoded.samples[10...12] == [0, 1, -1])
    }

    /// Every block but the last holds at least `blockFrames` samples (MP3 frames of 1,152
    /// samples gathered), and less than one decoder frame more.
    @Test(arguments: [1000, 4096])
    func blocksStreamInBoundedPieces(blockFrames: Int) throws {
        let rate = 44100
        let channels = TestSignals.stereo(seconds: 4, sampleRate: rate)
        for format in [AudioFileWriter.Format.flac, .mp3(.constant)] {
            let stream = try AudioStream(
                .bytes(try AudioFileWriter(format).encode(channels, sampleRate: rate), name: "blocks"),
                options: DecodingOptions(minimumSeconds: 1, blockFrames: blockFrames))
            var sizes: [Int] = []
            while try stream.readBlock({ sizes.append($0.count) }) {}
            #expect(sizes.dropLast().allSatisfy { $0 >= blockFrames }, "\(format): \(sizes)")
            #expect(sizes.allSatisfy { $0 < blockFrames + 1152 }, "\(format): \(sizes)")
            #expect(sizes.reduce(0, +) == stream.framesDecoded && stream.framesDecoded >= 4 * rate - 1152)
            #expect(stream.isFinished)
            #expect(try stream.readBlock { _ in Issue.record("no block after the end") } == false)
        }
    }
}

/// MPEG Layer II, which LAME cannot write: a hand-made stream of silent frames (a frame
/// whose bit allocations are all zero codes silence).
@Suite struct LayerIITests {
    @Test func silentLayerIIStreamDecodes() throws {
        // MPEG-1 Layer II, no CRC, 128 kb/s, 48 kHz, stereo: 384-byte frames of 1152 samples.
        let frame: [UInt8] = [0xFF, 0xFD, 0x84, 0x00] + [UInt8](repeating: 0, count: 380)
        let frames = 300
        let bytes = Array([[UInt8]](repeating: frame, count: frames).joined())
        let stream = try AudioStream(.bytes(bytes, name: "silence.mp2"))
        #expect(stream.metadata.format == .mpeg)
        #expect(stream.metadata.codec == "mp2")
        #expect(stream.metadata.channels == 2)
        #expect(stream.metadata.sampleRate == 48000)
        #expect(stream.metadata.bitrate == 128_000)
        let decoded = try stream.readAll()
        #expect(abs(decoded.samples.count - frames * 1152) <= 1152)
        #expect(decoded.samples.allSatisfy { $0 == 0 })
    }
}

/// MPEG streams without a Xing/Info frame: the length comes from a scan of the frames.
@Suite struct MPEGLengthTests {
    @Test func vbrWithoutXingIsScanned() throws {
        let channels = TestSignals.stereo(seconds: 6, sampleRate: 44100)
        let bytes = try AudioFileWriter(.mp3(.variable)).encode(channels, sampleRate: 44100)
        // Drop the first frame, LAME's Info/Xing frame (its length is in its header).
        let first = try #require(bytes.indices.first { bytes[$0] == 0xFF && bytes[$0 + 1] & 0xE0 == 0xE0 })
        let header = Array(bytes[first..<first + 4])
        let bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let length = 144 * bitrates[Int(header[2] >> 4)] * 1000 / 44100 + Int(header[2] >> 1 & 1)
        let stripped = Array(bytes[..<first]) + Array(bytes[(first + length)...])
        let stream = try AudioStream(.bytes(stripped, name: "noxing.mp3"), options: TestSignals.shortSongs)
        let expected = try #require(stream.expectedFrames)
        let decoded = try stream.readAll()
        #expect(expected == decoded.samples.count)
        // No gapless information: encoder delay and padding are decoded too.
        #expect(decoded.samples.count >= channels[0].count)
        #expect(decoded.samples.count <= channels[0].count + 3 * 1152)
        #expect(decoded.warnings.isEmpty)
    }
}
