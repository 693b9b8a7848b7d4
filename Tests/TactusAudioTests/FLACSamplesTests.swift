import CSndFile
import Foundation
import TactusAudio
import TactusTestSupport
import Testing

/// Native FLAC is decoded by libFLAC directly: its samples are libsndfile's to the bit (what
/// `sf_readf_float` delivers, averaged over the channels as the stream does), and so are its
/// length and how a damaged stream ends.
@Suite struct FLACSamplesTests {
    /// FLAC's sample sizes and channel counts, at a few rates.
    @Test(arguments: [SF_FORMAT_PCM_S8, SF_FORMAT_PCM_16, SF_FORMAT_PCM_24], [1, 2, 3, 6])
    func samplesAreLibsndfiles(subtype: Int, channels: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("song.flac")
        try Self.write(path, subtype: subtype, channels: channels, sampleRate: 44_100, seconds: 6)
        let reference = try Self.libsndfileSamples(path)
        let decoded = try DecodedAudio(decoding: .file(path), options: TestSignals.shortSongs)
        #expect(reference.failure == nil)
        #expect(decoded.samples.count == reference.samples.count)
        #expect(decoded.samples.map(\.bitPattern) == reference.samples.map(\.bitPattern))
        #expect(decoded.warnings.isEmpty)
    }

    /// A stream cut short delivers the frames libsndfile delivers, and ends as it does.
    @Test(arguments: [0.35, 0.5, 0.9])
    func cutStreamsEndAsLibsndfiles(fraction: Double) throws {
        let directory = try TemporaryDirectory()
        let whole = directory.file("whole.flac"), cut = directory.file("cut.flac")
        try Self.write(whole, subtype: SF_FORMAT_PCM_16, channels: 2, sampleRate: 22_050, seconds: 20)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: URL(fileURLWithPath: cut))
        let reference = try Self.libsndfileSamples(cut)
        let stream = try AudioStream(.file(cut), options: TestSignals.shortSongs)
        var samples: [Float] = []
        var failure: AudioError?
        do {
            while let block = try stream.nextBlock() { samples += block }
        } catch {
            failure = error
        }
        #expect(samples.map(\.bitPattern) == reference.samples.map(\.bitPattern))
        #expect(failure == nil)
        #expect(stream.warnings.count == 1, "the data ends early")
        if let message = reference.failure { #expect("\(stream.warnings)".contains(message)) }
    }

    /// Writes a test signal of `channels` channels (each its own tone over a drum pattern) with libsndfile.
    static func write(_ path: String, subtype: Int, channels: Int, sampleRate: Int, seconds: Double) throws {
        let drums = Synth.drumPattern(bpm: 120, seconds: seconds, sampleRate: Double(sampleRate))
        let tones = (0..<channels).map { Synth.sine(hz: 220 * Double($0 + 1), seconds: seconds, sampleRate: Double(sampleRate), amplitude: 0.4) }
        var interleaved: [Float] = []
        for index in drums.indices {
            for channel in 0..<channels { interleaved.append(0.5 * drums[index] + tones[channel][index]) }
        }
        var info = SF_INFO(frames: 0, samplerate: Int32(sampleRate), channels: Int32(channels), format: Int32(SF_FORMAT_FLAC | subtype), sections: 0, seekable: 0)
        let file = try #require(sf_open(path, Int32(SFM_WRITE), &info))
        #expect(sf_writef_float(file, interleaved, sf_count_t(drums.count)) == drums.count)
        sf_close(file)
    }

    /// What libsndfile delivers, read 4096 frames at a time and averaged over the channels as
    /// the stream averages them, and its error at the end (nil when it ended normally).
    static func libsndfileSamples(_ path: String) throws -> (samples: [Float], failure: String?) {
        var info = SF_INFO()
        let file = try #require(sf_open(path, Int32(SFM_READ), &info))
        defer { sf_close(file) }
        let channels = Int(info.channels)
        var buffer = [Float](repeating: 0, count: 4096 * channels)
        var samples: [Float] = []
        while true {
            let frames = Int(sf_readf_float(file, &buffer, 4096))
            guard frames > 0 else { break }
            for frame in 0..<frames {
                let values = buffer[(frame * channels)..<((frame + 1) * channels)]
                switch channels {
                case 1: samples.append(values.first!)
                case 2: samples.append((values.first! + values.last!) * 0.5)
                default: samples.append(values.reduce(0, +) * (1 / Float(channels)))
                }
            }
        }
        return (samples, sf_error(file) == 0 ? nil : String(cString: sf_strerror(file)))
    }
}
