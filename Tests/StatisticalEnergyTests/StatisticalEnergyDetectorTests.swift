import Testing
import StatisticalEnergyDetector
import TactusDetector
import TactusDetectorTestSupport
import TactusTestSupport

/// The checks every built-in detector passes, with this detector's arguments.
private let behaviour = DetectorBehaviour(StatisticalEnergyDetector.self)
private let descriptor = StatisticalEnergyDetector.descriptor

@Suite struct StatisticalEnergyParameterTests {
    @Test func everyParameterIsDeclaredWithAValidDefaultInEveryPreset() throws {
        try behaviour.everyParameterIsDeclaredWithAValidDefault(
            name: "statistical-energy", presets: ["default", "classic"],
            required: ["min_bpm", "max_bpm", "block_ms", "history_blocks", "c_slope", "c_intercept", "hold_blocks", "window_s", "hop_s",
                       "peak_ms", "interval_smoothing", "grouping_weight", "subdivision_weight", "prior_bpm"])
    }

    @Test func classicIsPatinsConfiguration() throws {
        let parameters = try descriptor.resolve(ParameterSet(["preset": .text("classic")]))
        // 1024 samples at 44.1 kHz, a 43-block history, Patin's line for C.
        #expect(abs(parameters.number("block_ms") - 1024_000.0 / 44_100) < 1e-9)
        #expect(parameters.integer("history_blocks") == 43)
        #expect(parameters.number("c_slope") == -0.0025714)
        #expect(parameters.number("c_intercept") == 1.5142857)
    }

    @Test func anUnknownParameterIsAnErrorNamingIt() {
        behaviour.anUnknownParameterIsAnErrorNamingIt("history_size", .number(43), listing: "history_blocks")
    }

    @Test(arguments: [
        ("history_blocks", ParameterValue.number(1)),
        ("history_blocks", .number(8.5)),
        ("block_ms", .number(500)),
        ("c_intercept", .number(-1)),
        ("window_s", .text("long")),
        ("preset", .text("fast")),
    ])
    func anOutOfRangeValueIsAnErrorNamingTheParameterAndTheRange(name: String, value: ParameterValue) {
        behaviour.anOutOfRangeValueIsAnErrorNamingTheParameterAndTheRange(name: name, value: value)
    }

    @Test func inconsistentValuesAreRejected() throws {
        try behaviour.inconsistentValuesAreRejected()
    }
}

@Suite struct StatisticalEnergyTempoTests {
    @Test(arguments: ["default", "classic"], [60.0, 74, 91, 108, 127, 146, 168, 200])
    func clickTracksGiveTheirTempoOrAnOctave(preset: String, bpm: Double) throws {
        try behaviour.clickTrackGivesItsTempoOrAnOctave(preset: preset, bpm: bpm)
    }

    /// Four-on-the-floor (kick on every beat, off-beat hi-hats) is dance music, written at
    /// 90-150 BPM; slower or faster, the tempo prior may report the octave (tested above).
    @Test(arguments: [92.0, 105, 118, 126, 138, 146])
    func theDefaultFindsTheWrittenTempoOfFourOnTheFloor(bpm: Double) throws {
        try behaviour.theDefaultFindsTheWrittenTempoOfFourOnTheFloor(bpm: bpm, range: 60...200)
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
        try behaviour.drumPatternGivesItsTempoOrAnOctave(preset: preset, pattern: pattern, bpm: bpm)
    }

    @Test(arguments: ["default", "classic"])
    func monoAndStereoFilesAtEverySampleRateGiveTheSameTempo(preset: String) throws {
        try behaviour.monoAndStereoFilesAtEverySampleRateGiveTheSameTempo(preset: preset)
    }

    @Test(arguments: ["default", "classic"])
    func theTempoDoesNotDependOnTheLevel(preset: String) throws {
        try behaviour.theTempoDoesNotDependOnTheLevel(preset: preset)
    }

    @Test(arguments: ["default", "classic"])
    func theBlockSizeDoesNotChangeTheResult(preset: String) throws {
        try behaviour.theBlockSizeDoesNotChangeTheResult(preset: preset)
    }

    @Test(arguments: ["default", "classic"])
    func aTempoRampGivesATempoWithinTheRamp(preset: String) throws {
        try behaviour.aTempoRampGivesATempoWithinTheRamp(preset: preset)
    }

    @Test func aRangeOfLessThanAnOctaveGivesTheTempoInsideIt() throws {
        try behaviour.aRangeOfLessThanAnOctaveGivesTheTempoInsideIt()
    }
}

@Suite struct StatisticalEnergyEdgeCaseTests {
    @Test(arguments: ["default", "classic"])
    func silenceHasNoTempo(preset: String) throws {
        try behaviour.silenceHasNoTempo(preset: preset)
    }

    @Test(arguments: ["default", "classic"])
    func whiteNoiseHasNoTempoOrALowConfidence(preset: String) throws {
        try behaviour.whiteNoiseHasNoTempoOrALowConfidence(preset: preset)
    }

    @Test(arguments: ["default", "classic"])
    func nonFiniteSamplesAreSilenceNotPoison(preset: String) throws {
        try behaviour.nonFiniteSamplesAreSilenceNotPoison(preset: preset)
    }

    @Test func aSteadyToneHasNoTempo() throws {
        try behaviour.aSteadyToneHasNoTempo()
    }

    @Test(arguments: ["default", "classic"])
    func windowsCoverTheSongWithTheirEnergiesAndTempi(preset: String) throws {
        try behaviour.windowsCoverTheSongWithTheirEnergiesAndTempi(preset: preset)
    }

    @Test func aSongShorterThanOneWindowStillHasATempo() throws {
        try behaviour.aSongShorterThanOneWindowStillHasATempo()
    }
}
