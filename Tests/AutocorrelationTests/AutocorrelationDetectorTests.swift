import Testing
import AutocorrelationDetector
import TactusDetector
import TactusDetectorTestSupport
import TactusTestSupport

/// The checks every built-in detector passes, with this detector's arguments.
private let behaviour = DetectorBehaviour(AutocorrelationDetector.self)
private let descriptor = AutocorrelationDetector.descriptor

@Suite struct AutocorrelationParameterTests {
    @Test func everyParameterIsDeclaredWithAValidDefaultInEveryPreset() throws {
        try behaviour.everyParameterIsDeclaredWithAValidDefault(
            name: "autocorrelation", presets: ["default", "classic"],
            required: ["min_bpm", "max_bpm", "decimated_hz", "cutoff_factor", "bands_per_octave", "flux_range_hz", "spectral_exponent", "window_s", "hop_s",
                       "grouping_weight", "subdivision_weight", "prior_bpm"])
    }

    @Test func classicIsTheSoundTouchConfiguration() throws {
        let parameters = try descriptor.resolve(ParameterSet(["preset": .text("classic")]))
        #expect(parameters.number("decimated_hz") == 500)
        #expect(parameters.number("cutoff_factor") > 0)
    }

    @Test func anUnknownParameterIsAnErrorNamingIt() {
        behaviour.anUnknownParameterIsAnErrorNamingIt("decimation", .number(88), listing: "decimated_hz")
    }

    @Test(arguments: [
        ("decimated_hz", ParameterValue.number(20)),
        ("bands_per_octave", .number(2.5)),
        ("flux_range_hz", .numbers([800, 400])),
        ("flux_range_hz", .numbers([100])),
        ("spectral_exponent", .number(0)),
        ("prior_octaves", .number(-1)),
        ("preset", .text("fast")),
    ])
    func anOutOfRangeValueIsAnErrorNamingTheParameterAndTheRange(name: String, value: ParameterValue) {
        behaviour.anOutOfRangeValueIsAnErrorNamingTheParameterAndTheRange(name: name, value: value)
    }

    @Test func inconsistentValuesAreRejected() throws {
        try behaviour.inconsistentValuesAreRejected()
    }
}

@Suite struct AutocorrelationTempoTests {
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

@Suite struct AutocorrelationEdgeCaseTests {
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
