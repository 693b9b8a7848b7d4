import Foundation
import TactusTestSupport
import Testing
@testable import TactusAudio

/// MPEG audio with junk between its frames: libmpg123 resynchronises over it, so the stream
/// is recognised as MPEG (and accepted at submit) instead of being called unsupported.
@Suite struct MPEGJunkTests {
    /// `audio` split into its frames (from its first frame header on), with the bytes before it.
    private func frames(_ audio: [UInt8]) throws -> (head: [UInt8], frames: [[UInt8]]) {
        let first = try #require(audio.indices.first { audio[$0] == 0xFF && MPEGFrameHeader(audio[$0...]) != nil })
        var frames = [[UInt8]]()
        var offset = first
        while offset < audio.count, let header = MPEGFrameHeader(audio[offset...]) {
            frames.append(Array(audio[offset..<min(audio.count, offset + header.frameLength)]))
            offset += header.frameLength
        }
        #expect(offset >= audio.count - 128, "the writer's frames chain to the end (an ID3v1 tag at most after them)")
        return (Array(audio[..<first]), frames)
    }

    @Test func junkBetweenEveryFrameIsResynchronisedOver() throws {
        let signal = TestSignals.mono(seconds: 8, sampleRate: 44100)
        let audio = try AudioFileWriter(.mp3(.constant)).encode(signal, sampleRate: 44100)
        let (head, frames) = try frames(audio)
        var generator = SeededGenerator(seed: 21)
        var junked = head
        for frame in frames {
            junked += frame + [UInt8](repeating: 0, count: 1 + Int(generator.next() % 40))
        }
        let stream = try AudioStream(.bytes(junked, name: "junk.mp3"))
        #expect(stream.metadata.format == .mpeg && stream.metadata.sampleRate == 44100)
        let decoded = try DecodedAudio(decoding: .bytes(junked, name: "junk.mp3"))
        // libmpg123 may drop the frame beside a stretch of junk: most of the 8 s remain.
        #expect((6...8.1).contains(decoded.metadata.duration), "\(decoded.metadata.duration) s")
    }
}
