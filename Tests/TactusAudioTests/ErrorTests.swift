import Foundation
import TactusAudio
import TactusModel
import TactusTestSupport
import Testing

/// Every error code, produced by real bad input, with a message naming the file.
@Suite struct ErrorTests {
    /// Decodes `source` to the end and returns the error, if any.
    func failure(_ source: AudioSource, options: DecodingOptions = .standard) -> AudioError? {
        do throws(AudioError) {
            _ = try DecodedAudio(decoding: source, options: options)
            return nil
        } catch {
            return error
        }
    }

    @Test func emptyInputIsEmpty() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("nothing.mp3")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        #expect(failure(.file(path)) == .empty(file: path))
        let error = try #require(failure(.bytes([], name: "upload 7")))
        #expect(error.code == .empty)
        #expect(error.description.contains("upload 7"))
    }

    @Test func missingFilesAndDirectoriesAreUnreadable() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.file("absent.flac")
        let error = try #require(failure(.file(missing)))
        #expect(error.code == .unreadable)
        #expect(error.file == missing)
        #expect(error.description.contains("absent.flac"))
        #expect(failure(.file(directory.path))?.code == .unreadable)
        #expect(throws: AudioError.self) { try SongID(of: .file(missing)).hex }
    }

    /// A read the system refuses (here a descriptor open for writing only, as a failing disk or
    /// a network share's hiccup would refuse it) is `unreadable`, naming the byte and the
    /// reason: not content that is not audio, which a scan would remember as such.
    @Test(arguments: [AudioFileWriter.Format.wav16, .flac, .mp3(.variable), .oggVorbis])
    func aFailedReadIsUnreadable(format: AudioFileWriter.Format) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("song")
        try AudioFileWriter(format).write(TestSignals.mono(seconds: 12, sampleRate: 44100), sampleRate: 44100, to: path)
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let error = try #require(failure(.descriptor(descriptor, name: path)))
        #expect(error.code == .unreadable, "\(format): \(error)")
        #expect(error.description.contains(path) && error.description.contains("read error at byte 0: Bad file descriptor"), "\(error)")
        #expect(throws: AudioError.unreadable(file: path, reason: "read error at byte 0: Bad file descriptor")) {
            try SongID(of: .descriptor(descriptor, name: path))
        }
    }

    @Test func nonAudioIsUnsupported() throws {
        let text = Array("This is a text file, not a song.\n".utf8)
        let error = try #require(failure(.bytes(text, name: "notes.mp3")))
        #expect(error.code == .unsupportedFormat)
        #expect(error.description.contains("notes.mp3"))
        #expect(error.description.contains("54 68 69 73"))  // "This", as seen

        var noise = SeededGenerator(seed: 11)
        let random = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &noise) }
        #expect(failure(.bytes(random, name: "noise.wav"))?.code == .unsupportedFormat)
    }

    @Test func oggWithAnUnsupportedCodecIsUnsupported() throws {
        var page = Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20) + [1, 80]
        page += Array("Speex   ".utf8) + [UInt8](repeating: 0, count: 72)
        let error = try #require(failure(.bytes(page, name: "voice.ogg")))
        #expect(error.code == .unsupportedFormat)
        #expect(error.description.contains("speex"))
    }

    @Test func damagedHeadersAreCorrupt() throws {
        // A RIFF WAVE whose format chunk declares zero channels.
        var wav = Array("RIFF".utf8) + [36, 1, 0, 0] + Array("WAVE".utf8) + Array("fmt ".utf8) + [16, 0, 0, 0]
        wav += [1, 0, 0, 0, 0x44, 0xAC, 0, 0, 0x10, 0xB1, 2, 0, 4, 0, 16, 0]
        wav += Array("data".utf8) + [0, 1, 0, 0] + [UInt8](repeating: 0, count: 256)
        let wavError = try #require(failure(.bytes(wav, name: "broken.wav")))
        #expect(wavError.code == .corrupt)
        guard case .corrupt(let file, let message) = wavError else { return }
        #expect(file == "broken.wav")
        #expect(!message.isEmpty)

        var noise = SeededGenerator(seed: 5)
        let flac = Array("fLaC".utf8) + (0..<4000).map { _ in UInt8.random(in: 0...255, using: &noise) }
        #expect(failure(.bytes(flac, name: "broken.flac"))?.code == .corrupt)
    }

    @Test func shortSongsAreTooShort() throws {
        let bytes = try AudioFileWriter(.wav16).encode(TestSignals.mono(seconds: 3, sampleRate: 44100), sampleRate: 44100)
        let error = try #require(failure(.bytes(bytes, name: "jingle.wav")))
        #expect(error == .tooShort(file: "jingle.wav", seconds: 3, minimumSeconds: 5))
        #expect(error.description.contains("jingle.wav"))
        // The minimum is configurable.
        #expect(failure(.bytes(bytes, name: "jingle.wav"), options: DecodingOptions(minimumSeconds: 2)) == nil)
    }

    @Test func longSongsAreTooLongFromTheirHeader() throws {
        let bytes = try AudioFileWriter(.flac).encode(TestSignals.mono(seconds: 6, sampleRate: 22050), sampleRate: 22050)
        let options = DecodingOptions(minimumSeconds: 1, maximumSeconds: 4)
        #expect(throws: AudioError.tooLong(file: "long.flac", seconds: 6, maximumSeconds: 4, estimated: true)) {
            try AudioStream(.bytes(bytes, name: "long.flac"), options: options)
        }
        #expect(failure(.bytes(bytes, name: "long.flac"), options: DecodingOptions(minimumSeconds: 1, maximumSeconds: 7)) == nil)
    }

    @Test func decodingStopsPastTheLimitWhenTheHeaderIsSilent() throws {
        var bytes = try AudioFileWriter(.flac).encode(TestSignals.mono(seconds: 6, sampleRate: 22050), sampleRate: 22050)
        // STREAMINFO's 36-bit total sample count (bytes 21-25) set to 0: "unknown".
        bytes[21] &= 0xF0
        for index in 22...25 { bytes[index] = 0 }
        let stream = try AudioStream(.bytes(bytes, name: "endless.flac"), options: DecodingOptions(minimumSeconds: 1, maximumSeconds: 4))
        #expect(stream.expectedFrames == nil)
        let error = #expect(throws: AudioError.self) { try stream.readToEnd() }
        guard case .tooLong(_, let seconds, 4, false) = error else {
            Issue.record("expected too-long found while decoding, got \(String(describing: error))")
            return
        }
        #expect(seconds > 4 && seconds < 4.5)
        #expect(stream.isFinished)
    }

    /// A file cut short decodes what it has: a warning with the decoded duration when at
    /// least the minimum remains, an error otherwise.
    @Test(arguments: [AudioFileWriter.Format.wav16, .flac, .mp3(.variable), .oggVorbis])
    func cutFilesAreTruncated(format: AudioFileWriter.Format) throws {
        let bytes = try AudioFileWriter(format).encode(TestSignals.mono(seconds: 12, sampleRate: 44100), sampleRate: 44100)
        let mostly = Array(bytes.prefix(bytes.count * 7 / 10))
        let decoded = try DecodedAudio(decoding: .bytes(mostly, name: "cut"))
        #expect(decoded.metadata.duration > 5 && decoded.metadata.duration < 9)
        #expect(decoded.warnings.count == 1)
        guard case .truncated(let seconds, let expected, _) = decoded.warnings.first else {
            Issue.record("expected a truncation warning for \(format)")
            return
        }
        #expect(seconds == decoded.metadata.duration)
        if format != .oggVorbis {
            #expect(abs(try #require(expected) - 12) < 0.05)
        }
        #expect(decoded.warnings[0].code == .truncated)

        let little = Array(bytes.prefix(bytes.count / 5))
        let error = try #require(failure(.bytes(little, name: "cut.bin")))
        #expect(error.code == .truncated, "\(format): \(error)")
        #expect(error.description.contains("cut.bin"))
    }
}
