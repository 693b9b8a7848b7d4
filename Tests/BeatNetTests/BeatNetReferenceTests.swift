import Foundation
import Testing
import TactusDSP
import TactusDetector
import TactusTestSupport

@testable import BeatNetDetector

/// The Swift port of BeatNet against BeatNet's own Python code (madmom's features, the PyTorch
/// network with its weights), on the fixture `Tests/Fixtures/beatnet` that
/// `Plugins/BeatNet/tools/make_reference.py` wrote: 3 s of synthesised drums at 22,050 Hz.
@Suite struct BeatNetReferenceTests {
    static let directory = CLI.repositoryRoot + "/Tests/Fixtures/beatnet/"

    /// The 16-bit PCM samples of a mono WAV file, scaled by 1/32768 (libsndfile's and the
    /// reference script's scaling).
    static func wavSamples(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var offset = 12
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<(offset + 4)], as: UTF8.self)
            let size = data[(offset + 4)..<(offset + 8)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            if id == "data" {
                let body = data[(offset + 8)..<(offset + 8 + size)]
                return stride(from: body.startIndex, to: body.endIndex - 1, by: 2).map {
                    Float(Int16(bitPattern: UInt16(body[$0]) | UInt16(body[$0 + 1]) << 8)) / 32768
                }
            }
            offset += 8 + size + (size & 1)
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    static func floats(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { raw in
            (0..<(data.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self))) }
        }
    }

    /// The filtered magnitudes of the fixture's audio, frame by frame.
    static func magnitudes() throws -> (values: [Float], bands: Int) {
        let samples = try wavSamples(directory + "reference.wav")
        let spectrogram = FilteredSpectrogram(sampleRate: 22_050)
        var values: [Float] = []
        samples.withUnsafeBufferPointer { spectrogram.consume($0) { values.append(contentsOf: $0) } }
        spectrogram.finish { values.append(contentsOf: $0) }
        return (values, spectrogram.bandCount)
    }

    @Test func theFilterbankHasBeatNetsBands() {
        let filterbank = LogFilterbank(binCount: 705, sampleRate: 22_050)
        #expect(filterbank.bands.count == 136)  // BeatNet's input is 272 = 2 x 136
        #expect(filterbank.bands.allSatisfy { abs($0.weights.reduce(0, +) - 1) < 1e-5 })
    }

    @Test func theFeaturesAreBeatNets() throws {
        let (magnitudes, bands) = try Self.magnitudes()
        let expected = try Self.floats(Self.directory + "features.f32")
        let frames = magnitudes.count / bands
        #expect(frames * BeatNetNetwork.inputWidth == expected.count)  // ceil(66,150 / 441) = 150 frames
        var features = [Float](repeating: 0, count: frames * BeatNetNetwork.inputWidth)
        let activation = try BeatNetActivation(bandCount: bands)
        magnitudes.withUnsafeBufferPointer { m in
            features.withUnsafeMutableBufferPointer { activation.makeFeatures(magnitudes: m, frames: 0..<frames, gain: 1, into: $0.baseAddress!) }
        }
        let worst = zip(features, expected).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-4, "largest feature difference \(worst)")
    }

    @Test func theActivationIsBeatNetsWithin1e4() throws {
        let (magnitudes, bands) = try Self.magnitudes()
        let expected = try Self.floats(Self.directory + "activation.f32")
        // Chunks of 64 frames: the LSTM state must carry across chunks.
        let activation = BeatNetActivation(bandCount: bands, network: try BeatNetNetwork(chunkFrames: 64))
        let found = magnitudes.withUnsafeBufferPointer { activation.activation(magnitudes: $0, gain: 1) }
        #expect(found.count == expected.count)
        let worst = zip(found, expected).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-4, "largest activation difference \(worst)")
        // Not a trivial match: the reference has clear beats (P(beat) + P(downbeat) near 1 on
        // the kicks at 0.1 s + k * 0.5 s) and clear non-beats.
        let beat = stride(from: 0, to: expected.count, by: 3).map { expected[$0] + expected[$0 + 1] }
        #expect(beat.max()! > 0.9 && beat.min()! < 0.1)
    }
}

/// The detector's own path to the network's input: the song through the shared front ends
/// (``ResampledSignal``, libsoxr) into the spectrogram, as a session feeds it.
@Suite struct BeatNetSessionPathTests {
    static func sessionMagnitudes(_ samples: [Float], sampleRate: Double, block: Int) throws -> [Float] {
        let detector = try BeatNetDetector(parameters: BeatNetDetector.descriptor.resolve(ParameterSet()))
        let session = try #require(detector.makeSession(
            format: SignalFormat(sampleRate: sampleRate, expectedFrames: samples.count), frontEnds: SharedFrontEnds()) as? BeatNetSession)
        samples.withUnsafeBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: block) {
                session.consume(UnsafeBufferPointer(rebasing: all[start..<min(start + block, all.count)]))
            }
        }
        _ = session.finish()
        return session.magnitudes
    }

    /// At 22,050 Hz the song reaches the spectrogram untouched: the session's magnitudes are
    /// those the reference test checks against madmom, bit for bit.
    @Test func at22050HzTheSessionFeedsTheSpectrogramTheSongItself() throws {
        let samples = try BeatNetReferenceTests.wavSamples(BeatNetReferenceTests.directory + "reference.wav")
        let direct = try BeatNetReferenceTests.magnitudes().values
        #expect(try Self.sessionMagnitudes(samples, sampleRate: 22_050, block: 333) == direct)
    }

    /// The fixture played at 44.1 kHz (libsoxr up, then the session's libsoxr down) gives the
    /// reference activation to within what the two resamplings remove: libsoxr's pass band
    /// ends at 91.3 % of 11,025 Hz, and the drums' noise reaches the top bands (10-11 kHz).
    /// Measured: mean difference 0.0037, largest 0.103, the same frames above P = 0.5.
    @Test func at44100HzTheActivationStaysTheReferences() throws {
        let samples = try BeatNetReferenceTests.wavSamples(BeatNetReferenceTests.directory + "reference.wav")
        var upsampled: [Float] = []
        let up = try Resampler(inputRate: 22_050, outputRate: 44_100)
        samples.withUnsafeBufferPointer { up.process($0) { upsampled.append(contentsOf: $0) } }
        up.finish { upsampled.append(contentsOf: $0) }
        let magnitudes = try Self.sessionMagnitudes(upsampled, sampleRate: 44_100, block: 4096)
        let expected = try BeatNetReferenceTests.floats(BeatNetReferenceTests.directory + "activation.f32")
        let activation = try BeatNetActivation(bandCount: 136)
        let found = magnitudes.withUnsafeBufferPointer { activation.activation(magnitudes: $0, gain: 1) }
        #expect(found.count == expected.count)
        let differences = zip(found, expected).map { abs($0 - $1) }
        let worst = differences.max() ?? .infinity
        let mean = differences.reduce(0, +) / Float(max(differences.count, 1))
        let beats = { (a: [Float]) in stride(from: 0, to: a.count, by: 3).map { a[$0] + a[$0 + 1] > 0.5 } }
        #expect(mean < 0.01 && worst < 0.15, "activation differences: mean \(mean), largest \(worst)")
        #expect(beats(found) == beats(expected))
    }
}

/// The detector's beats on synthesised drums whose beats are known.
@Suite struct BeatNetBeatTests {
    @Test func drumsAt120GiveBeatsHalfASecondApartOnTheKicks() throws {
        let detector = try BeatNetDetector(parameters: BeatNetDetector.descriptor.resolve(ParameterSet()))
        let seconds = 20.0
        let output = detector.analyze(Synth.drumPattern(bpm: 120, seconds: seconds, sampleRate: 44_100), sampleRate: 44_100)
        let beats = try #require(output.beats)
        let intervals = zip(beats.times.dropFirst(), beats.times).map { $0 - $1 }
        let median = intervals.sorted()[intervals.count / 2]
        #expect(abs(median - 0.5) < 0.02, "median beat interval \(median)")
        #expect(abs(Double(beats.times.count) - seconds / 0.5) <= 3, "\(beats.times.count) beats")
        #expect(zip(beats.times.dropFirst(), beats.times).allSatisfy { $0 > $1 })
        // On the beats of the pattern (every 0.5 s from 0), to within two network frames.
        let offsets = beats.times.map { time in abs(time - 0.5 * (time / 0.5).rounded()) }
        #expect(offsets.sorted()[offsets.count / 2] <= 0.04, "\(offsets)")
        let downbeats = beats.downbeats ?? []
        #expect(downbeats.allSatisfy { beats.times.contains($0) })
    }

    @Test func silenceHasNoBeats() throws {
        let detector = try BeatNetDetector(parameters: BeatNetDetector.descriptor.resolve(ParameterSet()))
        #expect(detector.analyze(Synth.silence(seconds: 10, sampleRate: 22_050), sampleRate: 22_050).beats == nil)
    }
}
