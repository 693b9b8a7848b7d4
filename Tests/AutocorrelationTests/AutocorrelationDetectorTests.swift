import Testing
import AutocorrelationDetector
import TactusAudio
import TactusDetector
import TactusTestSupport

private let descriptor = AutocorrelationDetector.descriptor

private func detector(_ given: [String: ParameterValue] = [:]) throws -> AutocorrelationDetector {
    try AutocorrelationDetector(parameters: descriptor.resolve(ParameterSet(given)))
}

private func detector(preset: String) throws -> AutocorrelationDetector {
    try detector(["preset": .text(preset)])
}

/// True when `bpm` is within `tolerance` of `written`, or of twice or half of it.
private func isWrittenOrOctave(_ bpm: Double?, _ written: Double, tolerance: Double = 0.01) -> Bool {
    guard let bpm else { return false }
    return [1.0, 2, 0.5].contains { abs(bpm - written * $0) <= tolerance * written * $0 }
}

/// Writes `channels` as a 16-bit WAV file through libsndfile and analyses it as `tactus`
/// does: decoded back by TactusAudio (which averages the channels) and streamed block by
/// block into a session.
private func analyzeFile(_ channels: [[Float]], sampleRate: Int, with detector: some TempoDetector) throws -> DetectorOutput {
    let directory = try TemporaryDirectory(prefix: "tactus-autocorrelation-test")
    let path = directory.file("song.wav")
    try AudioFileWriter(.wav16).write(channels, sampleRate: sampleRate, to: path)
    let stream = try AudioStream(.file(path))
    let session = detector.makeSession(format: SignalFormat(
        sampleRate: Double(stream.metadata.sampleRate), expectedFrames: stream.expectedFrames))
    while try stream.readBlock({ session.consume($0) }) {}
    return session.finish()
}

@Suite struct AutocorrelationParameterTests {
    @Test func everyParameterIsDeclaredWithAValidDefaultInEveryPreset() throws {
        #expect(descriptor.name == "autocorrelation")
        for spec in descriptor.parameters {
            #expect(!spec.summary.isEmpty, "\(spec.name) has no description")
            for preset in ["default", "classic"] {
                _ = try spec.validate(spec.defaultValue(preset: preset), detector: descriptor.name)
            }
        }
        let names = descriptor.parameters.map(\.name)
        for name in ["min_bpm", "max_bpm", "decimated_hz", "cutoff_factor", "band_edges_hz", "window_s", "hop_s", "prior_bpm"] {
            #expect(names.contains(name))
        }
    }

    @Test func classicIsTheSoundTouchConfiguration() throws {
        let parameters = try descriptor.resolve(ParameterSet(["preset": .text("classic")]))
        #expect(parameters.number("decimated_hz") == 500)
        #expect(parameters.number("cutoff_factor") > 0)
    }

    @Test func anUnknownParameterIsAnErrorNamingIt() {
        #expect {
            _ = try descriptor.resolve(ParameterSet(["decimation": .number(88)]))
        } throws: { error in
            guard case .unknownParameter(let detector, let parameter, let known)? = error as? ParameterError else { return false }
            return detector == "autocorrelation" && parameter == "decimation" && known.contains("decimated_hz")
        }
    }

    @Test(arguments: [
        ("decimated_hz", ParameterValue.number(20)),
        ("beat_multiples", .number(2.5)),
        ("band_edges_hz", .numbers([0, 800, 400])),
        ("band_edges_hz", .numbers([100])),
        ("prior_octaves", .number(-1)),
        ("preset", .text("fast")),
    ])
    func anOutOfRangeValueIsAnErrorNamingTheParameterAndTheRange(name: String, value: ParameterValue) {
        #expect {
            _ = try descriptor.resolve(ParameterSet([name: value]))
        } throws: { error in
            guard case .outOfRange(_, let parameter, _, let accepted)? = error as? ParameterError else { return false }
            return parameter == name && accepted == descriptor.parameter(name)!.kind.acceptedValues
        }
    }

    @Test func inconsistentValuesAreRejected() throws {
        #expect(throws: ParameterError.self) { try detector(["hop_s": .number(10), "window_s": .number(5)]) }
        #expect(throws: ParameterError.self) { try detector(["min_bpm": .number(150), "max_bpm": .number(100)]) }
        // A range narrower than an octave is allowed.
        _ = try detector(["min_bpm": .number(100), "max_bpm": .number(150)])
    }
}

@Suite struct AutocorrelationTempoTests {
    @Test(arguments: ["default", "classic"], [60.0, 74, 91, 108, 127, 146, 168, 200])
    func clickTracksGiveTheirTempoOrAnOctave(preset: String, bpm: Double) throws {
        let output = try detector(preset: preset).analyze(
            Synth.clickTrack(bpm: bpm, seconds: 16, sampleRate: 22_050), sampleRate: 22_050)
        #expect(isWrittenOrOctave(output.bpm, bpm), "\(preset) \(bpm): \(String(describing: output.bpm))")
    }

    /// Four-on-the-floor (kick on every beat, off-beat hi-hats) is dance music, written at
    /// 90-150 BPM; slower or faster, the tempo prior may report the octave (tested above).
    @Test(arguments: [92.0, 105, 118, 126, 138, 146])
    func theDefaultFindsTheWrittenTempoOfFourOnTheFloor(bpm: Double) throws {
        let output = try detector().analyze(Synth.drumPattern(bpm: bpm, seconds: 16, sampleRate: 22_050), sampleRate: 22_050)
        let found = try #require(output.bpm)
        #expect(abs(found - bpm) <= 0.01 * bpm, "\(bpm): \(found)")
        #expect(output.confidence > 0.2)
        #expect(output.candidates.first.map { abs($0.bpm - found) < 1e-9 && $0.strength == 1 } == true)
        #expect(output.candidates.count <= 5)
        #expect(output.candidates.allSatisfy { (60...200).contains($0.bpm) && (0...1).contains($0.strength) })
        // The octave relatives inside the range are among the candidates.
        for relative in [bpm / 2, bpm * 2] where (60...200).contains(relative) {
            #expect(output.candidates.contains { abs($0.bpm - relative) <= 0.02 * relative }, "\(relative)")
        }
    }

    /// The default handles backbeats and half-time feels; the classic presets, like the source
    /// documents' detectors, are only expected to get the clear patterns right.
    @Test(arguments: [
        ("default", Synth.Pattern.backbeat, 84.0), ("default", .backbeat, 132), ("default", .halfTime, 70),
        ("default", .halfTime, 142), ("default", .fourOnTheFloor, 65), ("default", .fourOnTheFloor, 186),
        ("classic", .fourOnTheFloor, 77), ("classic", .fourOnTheFloor, 164), ("classic", .backbeat, 84),
        ("classic", .backbeat, 132),
    ])
    func drumPatternsGiveTheirTempoOrAnOctave(preset: String, pattern: Synth.Pattern, bpm: Double) throws {
        let signal = Synth.drumPattern(bpm: bpm, seconds: 16, sampleRate: 22_050, pattern: pattern)
        let output = try detector(preset: preset).analyze(signal, sampleRate: 22_050)
        #expect(isWrittenOrOctave(output.bpm, bpm), "\(preset) \(bpm): \(String(describing: output.bpm))")
    }

    @Test(arguments: ["default", "classic"])
    func monoAndStereoFilesAtEverySampleRateGiveTheSameTempo(preset: String) throws {
        let detector = try detector(preset: preset)
        var tempi: [Double] = []
        for rate in [22_050, 44_100, 48_000] {
            let music = Synth.drumPattern(bpm: 123, seconds: 12, sampleRate: Double(rate), pattern: .backbeat)
            // Stereo with the right channel 6 dB down, as a mix panned to the left.
            for channels in [[music], [music, music.map { $0 * 0.5 }]] {
                tempi.append(try #require(try analyzeFile(channels, sampleRate: rate, with: detector).bpm))
            }
        }
        #expect(tempi.max()! / tempi.min()! <= 1.005, "\(tempi)")
        #expect(isWrittenOrOctave(tempi[0], 123))
    }

    @Test(arguments: ["default", "classic"])
    func theTempoDoesNotDependOnTheLevel(preset: String) throws {
        let detector = try detector(preset: preset)
        let music = Synth.drumPattern(bpm: 117, seconds: 16, sampleRate: 22_050, pattern: .backbeat)
        let tempi = try [Float(1), 0.1, 1e-4].map { gain in  // 0, -20 and -80 dB
            try #require(detector.analyze(music.map { $0 * gain }, sampleRate: 22_050).bpm)
        }
        #expect(tempi.max()! / tempi.min()! <= 1.005, "\(tempi)")
    }

    @Test(arguments: ["default", "classic"])
    func theBlockSizeDoesNotChangeTheResult(preset: String) throws {
        let detector = try detector(preset: preset)
        let signal = Synth.drumPattern(bpm: 131, seconds: 12, sampleRate: 22_050)
        let reference = detector.analyze(signal, sampleRate: 22_050, blockSize: 4096)
        for blockSize in [1, 333, 65_536] {
            let output = detector.analyze(signal, sampleRate: 22_050, blockSize: blockSize)
            #expect(output.bpm == reference.bpm)
            #expect(output.candidates == reference.candidates)
            #expect(output.windows.map(\.bpm) == reference.windows.map(\.bpm))
            for (window, expected) in zip(output.windows, reference.windows) {
                // Energies are summed in blocks: equal up to float rounding.
                #expect(abs(window.energy - expected.energy) <= 1e-6 * expected.energy)
            }
        }
    }

    @Test(arguments: ["default", "classic"])
    func aTempoRampGivesATempoWithinTheRamp(preset: String) throws {
        let signal = Synth.drumPattern(bpm: 100, seconds: 30, sampleRate: 22_050, endBPM: 112)
        let found = try #require(try detector(preset: preset).analyze(signal, sampleRate: 22_050).bpm)
        let octave = [1.0, 2, 0.5].first { found >= 99 * $0 && found <= 113 * $0 }
        #expect(octave != nil, "\(found)")
    }

    @Test func aRangeOfLessThanAnOctaveGivesTheTempoInsideIt() throws {
        let signal = Synth.drumPattern(bpm: 70, seconds: 20, sampleRate: 22_050)
        let low = try detector(["min_bpm": .number(55), "max_bpm": .number(95)]).analyze(signal, sampleRate: 22_050)
        let high = try detector(["min_bpm": .number(110), "max_bpm": .number(190)]).analyze(signal, sampleRate: 22_050)
        #expect(low.bpm.map { abs($0 - 70) <= 0.7 } == true, "\(String(describing: low.bpm))")
        #expect(high.bpm.map { abs($0 - 140) <= 1.4 } == true, "\(String(describing: high.bpm))")
    }
}

@Suite struct AutocorrelationEdgeCaseTests {
    @Test(arguments: ["default", "classic"])
    func silenceHasNoTempo(preset: String) throws {
        let detector = try detector(preset: preset)
        for signal in [Synth.silence(seconds: 15, sampleRate: 44_100), []] {
            let output = detector.analyze(signal, sampleRate: 44_100)
            #expect(output.bpm == nil)
            #expect(output.reason != nil)
            #expect(output.confidence == 0)
        }
    }

    @Test(arguments: ["default", "classic"])
    func whiteNoiseHasNoTempoOrALowConfidence(preset: String) throws {
        let detector = try detector(preset: preset)
        let drums = detector.analyze(Synth.drumPattern(bpm: 120, seconds: 15, sampleRate: 22_050), sampleRate: 22_050)
        for seed: UInt64 in [1, 2] {
            let noise = detector.analyze(Synth.whiteNoise(seconds: 15, sampleRate: 22_050, seed: seed), sampleRate: 22_050)
            #expect(noise.bpm == nil || noise.confidence < 0.1, "\(String(describing: noise.bpm)) \(noise.confidence)")
            #expect(noise.confidence < drums.confidence / 3)
        }
    }

    @Test(arguments: ["default", "classic"])
    func nonFiniteSamplesAreSilenceNotPoison(preset: String) throws {
        let detector = try detector(preset: preset)
        let clean = Synth.drumPattern(bpm: 120, seconds: 12, sampleRate: 22_050)
        var damaged = clean
        for index in stride(from: 500, to: damaged.count, by: 20_000) {
            damaged[index] = .nan
            damaged[index + 3] = -.infinity
        }
        let expected = try #require(detector.analyze(clean, sampleRate: 22_050).bpm)
        let output = detector.analyze(damaged, sampleRate: 22_050)
        let found = try #require(output.bpm)
        #expect(abs(found - expected) <= 0.005 * expected)
        #expect(output.confidence.isFinite)
        #expect(output.windows.allSatisfy { $0.energy.isFinite && $0.energy > 0 && $0.strength.isFinite })
    }

    @Test func aSteadyToneHasNoTempo() throws {
        let output = try detector().analyze(Synth.sine(hz: 440, seconds: 15, sampleRate: 44_100), sampleRate: 44_100)
        #expect(output.bpm == nil)
    }

    @Test(arguments: ["default", "classic"])
    func windowsCoverTheSongWithTheirEnergiesAndTempi(preset: String) throws {
        let output = try detector(["preset": .text(preset), "window_s": .number(6), "hop_s": .number(3)])
            .analyze(Synth.drumPattern(bpm: 128, seconds: 30, sampleRate: 22_050), sampleRate: 22_050)
        // Windows of 6 s every 3 s over 30 s: starting at 0, 3, ... 24 (to within one block),
        // plus one ending at the end of the song if the regular ones leave a tail.
        #expect((9...10).contains(output.windows.count))
        let first = try #require(output.windows.first)
        let last = try #require(output.windows.last)
        #expect(first.startS == 0)
        #expect(abs(last.startS + last.durationS - 30) < 0.05)
        for (index, window) in output.windows.enumerated() {
            if index < 9 { #expect(abs(window.startS - 3 * Double(index)) < 0.05 * Double(index + 1)) }
            #expect(abs(window.durationS - 6) < 0.05)
            #expect(window.energy > 0.001 && window.energy < 1)
            #expect((0...1).contains(window.strength))
            #expect(isWrittenOrOctave(window.bpm, 128, tolerance: 0.02), "\(String(describing: window.bpm))")
        }
    }

    @Test func aSongShorterThanOneWindowStillHasATempo() throws {
        let output = try detector().analyze(Synth.drumPattern(bpm: 120, seconds: 5, sampleRate: 22_050), sampleRate: 22_050)
        #expect(isWrittenOrOctave(output.bpm, 120))
        #expect(output.windows.count == 1)
    }
}
