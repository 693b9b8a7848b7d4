import Foundation
import TactusAudio
import TactusTestSupport
import Testing

/// A song decoded on its own thread gives what decoding on the reader's thread gives: the
/// same samples, the same warnings and errors at the same place; and it lets its thread go.
@Suite struct ReadAheadStreamTests {
    /// Every sample, the exact duration and the warnings are those of ``AudioStream``, for a
    /// whole file and for one cut short (its truncation warning after the last block).
    @Test(arguments: [AudioFileWriter.Format.flac, .mp3(.variable)], [false, true])
    func sameBlocksAsTheStreamItReads(format: AudioFileWriter.Format, cut: Bool) throws {
        var bytes = try AudioFileWriter(format).encode(TestSignals.stereo(seconds: 20, sampleRate: 44100), sampleRate: 44100)
        if cut { bytes = Array(bytes.prefix(bytes.count * 7 / 10)) }
        let direct = try DecodedAudio(decoding: .bytes(bytes, name: "song"))

        let start = ContinuousClock.now
        let ahead = ReadAheadStream(try AudioStream(.bytes(bytes, name: "song")), depth: 2)
        var samples: [Float] = []
        var blocks = 0
        while try ahead.readBlock(before: nil, { samples.append(contentsOf: $0); blocks += 1 }) == .delivered {}
        let elapsed = ContinuousClock.now - start
        #expect(blocks > 100)
        // The decoder's own time is counted, and it is part of the whole read's.
        #expect(ahead.decodingSeconds > 0)
        #expect(Duration.seconds(ahead.decodingSeconds) <= elapsed)
        #expect(samples == direct.samples)
        #expect(ahead.metadata.duration == direct.metadata.duration)
        #expect(ahead.metadata.durationIsExact)
        #expect(ahead.warnings.map(\.code) == direct.warnings.map(\.code))
        #expect(ahead.warnings.count == (cut ? 1 : 0))
        #expect(try ahead.readBlock(before: nil, { _ in Issue.record("a block after the end") }) == .ended)
    }

    /// A song cut too short for analysis fails after its blocks are read, with the error the
    /// stream throws, naming the file.
    @Test func anErrorComesAfterTheBlocksBeforeIt() throws {
        let bytes = try AudioFileWriter(.flac).encode(TestSignals.mono(seconds: 12, sampleRate: 44100), sampleRate: 44100)
        let little = Array(bytes.prefix(bytes.count / 5))
        let ahead = ReadAheadStream(try AudioStream(.bytes(little, name: "cut.flac")))
        var frames = 0
        let error = #expect(throws: AudioError.self) {
            while try ahead.readBlock(before: nil, { frames += $0.count }) == .delivered {}
        }
        #expect(error?.code == .truncated)
        #expect(error?.description.contains("cut.flac") == true)
        #expect(frames > 44100)
    }

    /// A reader that lets go after one block (a time limit) ends the decoding thread, which
    /// would otherwise wait for ever for room to decode the next block, holding the stream.
    @Test func lettingGoEndsTheDecodingThread() throws {
        let bytes = try AudioFileWriter(.wav16).encode(TestSignals.mono(seconds: 60, sampleRate: 44100), sampleRate: 44100)
        weak var decoded: AudioStream?
        do {
            let stream = try AudioStream(.bytes(bytes, name: "long.wav"))
            decoded = stream
            let ahead = ReadAheadStream(stream, depth: 2)
            #expect(try ahead.readBlock(before: nil, { _ in }) == .delivered)
        }
        try Wait.until("the decoding thread to end and let go of the stream", timeout: .seconds(10)) { decoded == nil }
    }

    /// A deadline already past while the decoder has nothing ready gives `late`, not a wait.
    @Test func aPastDeadlineGivesLateRatherThanAWait() throws {
        let bytes = try AudioFileWriter(.wav16).encode(TestSignals.mono(seconds: 10, sampleRate: 44100), sampleRate: 44100)
        let ahead = ReadAheadStream(try AudioStream(.bytes(bytes, name: "song.wav")))
        var steps: [ReadAheadStream.Step] = []
        var step = ReadAheadStream.Step.delivered
        while step != .ended {
            step = try ahead.readBlock(before: .now - .seconds(1), { _ in })
            steps.append(step)
        }
        // Every block is still delivered, in whatever turns the threads take.
        #expect(steps.filter { $0 == .delivered }.count == (10 * 44100 + 4095) / 4096)
    }
}
