import Testing
import TactusAnalysis
import TactusDetector
import TactusDetectorTestSupport
import TactusTestSupport

/// The behaviour every registered detector's `default` preset shares, run over
/// `BuiltinDetectors.registry`: a detector added to the registry is checked without a line
/// here. (Each detector's own test target adds its parameters and its other presets.)
private let names = BuiltinDetectors.registry.names

/// The registered detector type named `name` (its generic checks open it).
private func detectorType(_ name: String) throws -> any TempoDetector.Type {
    try #require(BuiltinDetectors.registry.detectorTypes.first { $0.descriptor.name == name })
}

private func parameterChecks<D: TempoDetector>(_ type: D.Type) throws {
    let checks = DetectorBehaviour(type)
    try checks.everyParameterIsDeclaredWithAValidDefault(
        name: D.descriptor.name, presets: ["default"], required: ["min_bpm", "max_bpm", "window_s", "hop_s"])
    try checks.inconsistentValuesAreRejected()
}

private func tempoChecks<D: TempoDetector>(_ type: D.Type, bpm: Double) throws {
    let checks = DetectorBehaviour(type)
    try checks.clickTrackGivesItsTempoOrAnOctave(preset: "default", bpm: bpm)
    try checks.drumPatternGivesItsTempoOrAnOctave(preset: "default", pattern: .backbeat, bpm: bpm)
}

private func fourOnTheFloorChecks<D: TempoDetector>(_ type: D.Type, bpm: Double) throws {
    try DetectorBehaviour(type).theDefaultFindsTheWrittenTempoOfFourOnTheFloor(bpm: bpm, range: 60...200)
}

private func invarianceChecks<D: TempoDetector>(_ type: D.Type) throws {
    let checks = DetectorBehaviour(type)
    try checks.monoAndStereoFilesAtEverySampleRateGiveTheSameTempo(preset: "default")
    try checks.theTempoDoesNotDependOnTheLevel(preset: "default")
    try checks.theBlockSizeDoesNotChangeTheResult(preset: "default")
    try checks.aRangeOfLessThanAnOctaveGivesTheTempoInsideIt()
}

private func edgeCaseChecks<D: TempoDetector>(_ type: D.Type) throws {
    let checks = DetectorBehaviour(type)
    try checks.silenceHasNoTempo(preset: "default")
    try checks.whiteNoiseHasNoTempoOrALowConfidence(preset: "default")
    try checks.nonFiniteSamplesAreSilenceNotPoison(preset: "default")
    try checks.aSteadyToneHasNoTempo()
    try checks.windowsCoverTheSongWithTheirEnergiesAndTempi(preset: "default")
    try checks.aSongShorterThanOneWindowStillHasATempo()
}

@Suite struct DetectorConformanceTests {
    @Test func everyBuiltinDetectorIsChecked() {
        #expect(names.sorted() == ["autocorrelation", "beatnet", "comb-filter", "statistical-energy"])
    }

    @Test(arguments: names)
    func parametersAreDeclaredAndValidated(name: String) throws {
        try parameterChecks(try detectorType(name))
    }

    @Test(arguments: names, [66.0, 97, 123, 151, 182])
    func clickTracksAndBackbeatsGiveTheirTempoOrAnOctave(name: String, bpm: Double) throws {
        try tempoChecks(try detectorType(name), bpm: bpm)
    }

    @Test(arguments: names, [92.0, 118, 138])
    func theDefaultFindsTheWrittenTempoOfFourOnTheFloor(name: String, bpm: Double) throws {
        try fourOnTheFloorChecks(try detectorType(name), bpm: bpm)
    }

    @Test(arguments: names)
    func sampleRateChannelsLevelAndBlockSizeDoNotMatter(name: String) throws {
        try invarianceChecks(try detectorType(name))
    }

    @Test(arguments: names)
    func silenceNoiseNaNsTonesAndShortSongsAreHandled(name: String) throws {
        try edgeCaseChecks(try detectorType(name))
    }
}
