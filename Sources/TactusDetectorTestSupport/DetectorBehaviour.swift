import Testing
import TactusAudio
import TactusDetector
import TactusTestSupport

/// The behaviour every built-in windowed detector shares, as reusable checks.
///
/// A detector's test file makes one `DetectorBehaviour` and calls its checks from its own
/// `@Test` functions, with its own arguments (tempi, patterns, presets, parameter names), so
/// the file keeps only what is specific to the detector:
///
/// ```swift
/// private let behaviour = DetectorBehaviour(AutocorrelationDetector.self)
///
/// @Test(arguments: ["default", "classic"], [60.0, 91, 127, 200])
/// func clickTracksGiveTheirTempoOrAnOctave(preset: String, bpm: Double) throws {
///     try behaviour.clickTrackGivesItsTempoOrAnOctave(preset: preset, bpm: bpm)
/// }
/// ```
///
/// Each check records its expectations at the caller's source location, so a failure points
/// at the detector's test, not at this file.
public struct DetectorBehaviour<Detector: TempoDetector>: Sendable {
    /// The detector's descriptor.
    public let descriptor: DetectorDescriptor

    /// Checks `detector`, made from its descriptor's resolved parameters.
    public init(_ detector: Detector.Type) {
        descriptor = Detector.descriptor
    }

    /// The detector with `given` parameters, the others at their defaults.
    public func detector(_ given: [String: ParameterValue] = [:]) throws -> Detector {
        try Detector(parameters: descriptor.resolve(ParameterSet(given)))
    }

    /// The detector with `preset`'s defaults.
    public func detector(preset: String) throws -> Detector {
        try detector(["preset": .text(preset)])
    }

    /// Writes `channels` as a 16-bit WAV file through libsndfile and analyses it as `tactus`
    /// does: decoded back by TactusAudio (which averages the channels) and streamed block by
    /// block into a session.
    public func analyzeFile(_ channels: [[Float]], sampleRate: Int, with detector: Detector) throws -> DetectorOutput {
        let directory = try TemporaryDirectory(prefix: "tactus-\(descriptor.name)-test")
        let path = directory.file("song.wav")
        try AudioFileWriter(.wav16).write(channels, sampleRate: sampleRate, to: path)
        let stream = try AudioStream(.file(path))
        let session = detector.makeSession(format: SignalFormat(
            sampleRate: Double(stream.metadata.sampleRate), expectedFrames: stream.expectedFrames))
        while try stream.readBlock({ session.consume($0) }) {}
        return session.finish()
    }

    // MARK: Parameters

    /// The descriptor is named `name`, declares `required` among its parameters, and every
    /// parameter has a description and a valid default in each of `presets`.
    public func everyParameterIsDeclaredWithAValidDefault(
        name: String, presets: [String] = ["default", "classic"], required: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(descriptor.name == name, sourceLocation: sourceLocation)
        for spec in descriptor.parameters {
            #expect(!spec.summary.isEmpty, "\(spec.name) has no description", sourceLocation: sourceLocation)
            for preset in presets {
                _ = try spec.validate(spec.defaultValue(preset: preset), detector: descriptor.name)
            }
        }
        let names = descriptor.parameters.map(\.name)
        for name in required {
            #expect(names.contains(name), "\(name)", sourceLocation: sourceLocation)
        }
    }

    /// Resolving `value` for the unknown parameter `unknown` fails with an error naming the
    /// detector and the parameter, and listing the known parameter `known`.
    public func anUnknownParameterIsAnErrorNamingIt(
        _ unknown: String, _ value: ParameterValue, listing known: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let descriptor = descriptor
        #expect(sourceLocation: sourceLocation) {
            _ = try descriptor.resolve(ParameterSet([unknown: value]))
        } throws: { error in
            guard case .unknownParameter(let detector, let parameter, let names)? = error as? ParameterError else { return false }
            return detector == descriptor.name && parameter == unknown && names.contains(known)
        }
    }

    /// Resolving `value` for `name` fails with an error naming the parameter and its accepted values.
    public func anOutOfRangeValueIsAnErrorNamingTheParameterAndTheRange(
        name: String, value: ParameterValue, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let descriptor = descriptor
        #expect(sourceLocation: sourceLocation) {
            _ = try descriptor.resolve(ParameterSet([name: value]))
        } throws: { error in
            guard case .outOfRange(_, let parameter, _, let accepted)? = error as? ParameterError else { return false }
            return parameter == name && accepted == descriptor.parameter(name)!.kind.acceptedValues
        }
    }

    /// A hop longer than the window and a minimum tempo above the maximum are rejected; a
    /// tempo range narrower than an octave is allowed.
    public func inconsistentValuesAreRejected(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(throws: ParameterError.self, sourceLocation: sourceLocation) {
            try detector(["hop_s": .number(10), "window_s": .number(5)])
        }
        #expect(throws: ParameterError.self, sourceLocation: sourceLocation) {
            try detector(["min_bpm": .number(150), "max_bpm": .number(100)])
        }
        _ = try detector(["min_bpm": .number(100), "max_bpm": .number(150)])
    }

    // MARK: Tempo

    /// A 16 s click track at `bpm` gives `bpm` or an octave of it, to 1 %.
    public func clickTrackGivesItsTempoOrAnOctave(
        preset: String, bpm: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let output = try detector(preset: preset).analyze(
            Synth.clickTrack(bpm: bpm, seconds: 16, sampleRate: 22_050), sampleRate: 22_050)
        #expect(TempoOctave.matches(output.bpm, bpm), "\(preset) \(bpm): \(String(describing: output.bpm))",
                sourceLocation: sourceLocation)
    }

    /// The default preset finds the written tempo of four-on-the-floor at `bpm` to 1 %, with a
    /// confidence above 0.2, the tempo as its strongest of at most five candidates in
    /// `range`, and the octave relatives inside `range` among the candidates.
    public func theDefaultFindsTheWrittenTempoOfFourOnTheFloor(
        bpm: Double, range: ClosedRange<Double> = 60...200, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let output = try detector().analyze(Synth.drumPattern(bpm: bpm, seconds: 16, sampleRate: 22_050), sampleRate: 22_050)
        let found = try #require(output.bpm, sourceLocation: sourceLocation)
        #expect(abs(found - bpm) <= 0.01 * bpm, "\(bpm): \(found)", sourceLocation: sourceLocation)
        #expect(output.confidence > 0.2, sourceLocation: sourceLocation)
        #expect(output.candidates.first.map { abs($0.bpm - found) < 1e-9 && $0.strength == 1 } == true,
                sourceLocation: sourceLocation)
        #expect(output.candidates.count <= 5, sourceLocation: sourceLocation)
        #expect(output.candidates.allSatisfy { range.contains($0.bpm) && (0...1).contains($0.strength) },
                sourceLocation: sourceLocation)
        for relative in [bpm / 2, bpm * 2] where range.contains(relative) {
            #expect(output.candidates.contains { abs($0.bpm - relative) <= 0.02 * relative }, "\(relative)",
                    sourceLocation: sourceLocation)
        }
    }

    /// A 16 s drum `pattern` at `bpm` gives `bpm` or an octave of it, to 1 %.
    public func drumPatternGivesItsTempoOrAnOctave(
        preset: String, pattern: Synth.Pattern, bpm: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let signal = Synth.drumPattern(bpm: bpm, seconds: 16, sampleRate: 22_050, pattern: pattern)
        let output = try detector(preset: preset).analyze(signal, sampleRate: 22_050)
        #expect(TempoOctave.matches(output.bpm, bpm), "\(preset) \(bpm): \(String(describing: output.bpm))",
                sourceLocation: sourceLocation)
    }

    /// Mono and stereo (right channel 6 dB down) WAV files at 22.05, 44.1 and 48 kHz of one
    /// backbeat at 123 BPM give tempi within 0.5 % of each other, the first 123 or an octave.
    public func monoAndStereoFilesAtEverySampleRateGiveTheSameTempo(
        preset: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let detector = try detector(preset: preset)
        var tempi: [Double] = []
        for rate in [22_050, 44_100, 48_000] {
            let music = Synth.drumPattern(bpm: 123, seconds: 12, sampleRate: Double(rate), pattern: .backbeat)
            for channels in [[music], [music, music.map { $0 * 0.5 }]] {
                tempi.append(try #require(try analyzeFile(channels, sampleRate: rate, with: detector).bpm,
                                          sourceLocation: sourceLocation))
            }
        }
        #expect(tempi.max()! / tempi.min()! <= 1.005, "\(tempi)", sourceLocation: sourceLocation)
        #expect(TempoOctave.matches(tempi[0], 123), sourceLocation: sourceLocation)
    }

    /// A backbeat at 0, -20 and -80 dB gives tempi within 0.5 % of each other.
    public func theTempoDoesNotDependOnTheLevel(preset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let detector = try detector(preset: preset)
        let music = Synth.drumPattern(bpm: 117, seconds: 16, sampleRate: 22_050, pattern: .backbeat)
        let tempi = try [Float(1), 0.1, 1e-4].map { gain in
            try #require(detector.analyze(music.map { $0 * gain }, sampleRate: 22_050).bpm, sourceLocation: sourceLocation)
        }
        #expect(tempi.max()! / tempi.min()! <= 1.005, "\(tempi)", sourceLocation: sourceLocation)
    }

    /// Blocks of 1, 333 and 65 536 samples give the tempo, candidates and window tempi of
    /// blocks of 4096, and the window energies up to float rounding.
    public func theBlockSizeDoesNotChangeTheResult(preset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let detector = try detector(preset: preset)
        let signal = Synth.drumPattern(bpm: 131, seconds: 12, sampleRate: 22_050)
        let reference = detector.analyze(signal, sampleRate: 22_050, blockSize: 4096)
        for blockSize in [1, 333, 65_536] {
            let output = detector.analyze(signal, sampleRate: 22_050, blockSize: blockSize)
            #expect(output.bpm == reference.bpm, sourceLocation: sourceLocation)
            #expect(output.candidates == reference.candidates, sourceLocation: sourceLocation)
            #expect(output.windows.map(\.bpm) == reference.windows.map(\.bpm), sourceLocation: sourceLocation)
            for (window, expected) in zip(output.windows, reference.windows) {
                #expect(abs(window.energy - expected.energy) <= 1e-6 * expected.energy, sourceLocation: sourceLocation)
            }
        }
    }

    /// A 30 s ramp from 100 to 112 BPM gives a tempo in 99...113 or an octave of that range.
    public func aTempoRampGivesATempoWithinTheRamp(preset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let signal = Synth.drumPattern(bpm: 100, seconds: 30, sampleRate: 22_050, endBPM: 112)
        let found = try #require(try detector(preset: preset).analyze(signal, sampleRate: 22_050).bpm,
                                 sourceLocation: sourceLocation)
        let octave = [1.0, 2, 0.5].first { found >= 99 * $0 && found <= 113 * $0 }
        #expect(octave != nil, "\(found)", sourceLocation: sourceLocation)
    }

    /// Four-on-the-floor at 70 BPM gives 70 (to 1 %) in 55-95 BPM and 140 in 110-190 BPM.
    public func aRangeOfLessThanAnOctaveGivesTheTempoInsideIt(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let signal = Synth.drumPattern(bpm: 70, seconds: 20, sampleRate: 22_050)
        let low = try detector(["min_bpm": .number(55), "max_bpm": .number(95)]).analyze(signal, sampleRate: 22_050)
        let high = try detector(["min_bpm": .number(110), "max_bpm": .number(190)]).analyze(signal, sampleRate: 22_050)
        #expect(low.bpm.map { abs($0 - 70) <= 0.7 } == true, "\(String(describing: low.bpm))", sourceLocation: sourceLocation)
        #expect(high.bpm.map { abs($0 - 140) <= 1.4 } == true, "\(String(describing: high.bpm))", sourceLocation: sourceLocation)
    }

    // MARK: Edge cases

    /// 15 s of digital silence, and an empty song, have no tempo, a reason and no confidence.
    public func silenceHasNoTempo(preset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let detector = try detector(preset: preset)
        for signal in [Synth.silence(seconds: 15, sampleRate: 44_100), []] {
            let output = detector.analyze(signal, sampleRate: 44_100)
            #expect(output.bpm == nil, sourceLocation: sourceLocation)
            #expect(output.reason != nil, sourceLocation: sourceLocation)
            #expect(output.confidence == 0, sourceLocation: sourceLocation)
        }
    }

    /// White noise has no tempo or a confidence under 0.1, and under a third of a drum pattern's.
    public func whiteNoiseHasNoTempoOrALowConfidence(preset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let detector = try detector(preset: preset)
        let drums = detector.analyze(Synth.drumPattern(bpm: 120, seconds: 15, sampleRate: 22_050), sampleRate: 22_050)
        for seed: UInt64 in [1, 2] {
            let noise = detector.analyze(Synth.whiteNoise(seconds: 15, sampleRate: 22_050, seed: seed), sampleRate: 22_050)
            #expect(noise.bpm == nil || noise.confidence < 0.1, "\(String(describing: noise.bpm)) \(noise.confidence)",
                    sourceLocation: sourceLocation)
            #expect(noise.confidence < drums.confidence / 3, sourceLocation: sourceLocation)
        }
    }

    /// NaN and infinite samples count as silence: the tempo stays within 0.5 % of the clean
    /// song's and the confidence, energies and strengths stay finite.
    public func nonFiniteSamplesAreSilenceNotPoison(preset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let detector = try detector(preset: preset)
        let clean = Synth.drumPattern(bpm: 120, seconds: 12, sampleRate: 22_050)
        var damaged = clean
        for index in stride(from: 500, to: damaged.count, by: 20_000) {
            damaged[index] = .nan
            damaged[index + 3] = -.infinity
        }
        let expected = try #require(detector.analyze(clean, sampleRate: 22_050).bpm, sourceLocation: sourceLocation)
        let output = detector.analyze(damaged, sampleRate: 22_050)
        let found = try #require(output.bpm, sourceLocation: sourceLocation)
        #expect(abs(found - expected) <= 0.005 * expected, sourceLocation: sourceLocation)
        #expect(output.confidence.isFinite, sourceLocation: sourceLocation)
        #expect(output.windows.allSatisfy { $0.energy.isFinite && $0.energy > 0 && $0.strength.isFinite },
                sourceLocation: sourceLocation)
    }

    /// A steady 440 Hz sine has no tempo.
    public func aSteadyToneHasNoTempo(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let output = try detector().analyze(Synth.sine(hz: 440, seconds: 15, sampleRate: 44_100), sampleRate: 44_100)
        #expect(output.bpm == nil, sourceLocation: sourceLocation)
    }

    /// Windows of 6 s every 3 s cover a 30 s song, each with a plausible energy, a strength in
    /// 0...1 and the song's tempo or an octave (to 2 %).
    public func windowsCoverTheSongWithTheirEnergiesAndTempi(
        preset: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let output = try detector(["preset": .text(preset), "window_s": .number(6), "hop_s": .number(3)])
            .analyze(Synth.drumPattern(bpm: 128, seconds: 30, sampleRate: 22_050), sampleRate: 22_050)
        // Windows of 6 s every 3 s over 30 s: starting at 0, 3, ... 24 (to within one block),
        // plus one ending at the end of the song if the regular ones leave a tail.
        #expect((9...10).contains(output.windows.count), sourceLocation: sourceLocation)
        let first = try #require(output.windows.first, sourceLocation: sourceLocation)
        let last = try #require(output.windows.last, sourceLocation: sourceLocation)
        #expect(first.startS == 0, sourceLocation: sourceLocation)
        #expect(abs(last.startS + last.durationS - 30) < 0.05, sourceLocation: sourceLocation)
        for (index, window) in output.windows.enumerated() {
            if index < 9 {
                #expect(abs(window.startS - 3 * Double(index)) < 0.05 * Double(index + 1), sourceLocation: sourceLocation)
            }
            #expect(abs(window.durationS - 6) < 0.05, sourceLocation: sourceLocation)
            #expect(window.energy > 0.001 && window.energy < 1, sourceLocation: sourceLocation)
            #expect((0...1).contains(window.strength), sourceLocation: sourceLocation)
            #expect(TempoOctave.matches(window.bpm, 128, tolerance: 0.02), "\(String(describing: window.bpm))",
                    sourceLocation: sourceLocation)
        }
    }

    /// A 5 s song, shorter than one window, has its tempo (or an octave) from one window.
    public func aSongShorterThanOneWindowStillHasATempo(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let output = try detector().analyze(Synth.drumPattern(bpm: 120, seconds: 5, sampleRate: 22_050), sampleRate: 22_050)
        #expect(TempoOctave.matches(output.bpm, 120), sourceLocation: sourceLocation)
        #expect(output.windows.count == 1, sourceLocation: sourceLocation)
    }
}
