import Foundation
import Testing
import TactusAnalysis
import TactusDetector
import TactusTestSupport

/// A detector that tracks beats tracks them at the consensus' metrical level when its own
/// tempo is at another: synthesised drums written through libsndfile and analysed from the file.
@Suite struct ConsensusLevelBeatsTests {
    /// beatnet made to read half the tempo (its tempo range capped below the song's) still
    /// gives a beat on every beat of the song when the voting detectors agree on the tempo.
    @Test func beatnetTracksTheBeatsAtTheConsensusTempoNotAtItsOwnHalf() throws {
        let bpm = 128.0, seconds = 40.0, rate = 44_100
        let song = Synth.drumPattern(bpm: bpm, seconds: seconds, sampleRate: Double(rate), pattern: .backbeat)
        let registry = BuiltinDetectors.registry
        let detectors = try registry.defaultNames.map { try registry.make($0) }
            + [try registry.make("beatnet", parameters: ParameterSet(["max_bpm": .number(90)]))]
        let analysis = try TestSongs.analyze([song], sampleRate: rate, detectors: detectors)
        let consensus = try #require(analysis.consensus.bpm)
        try #require(TempoRelation.matches(consensus, bpm), "consensus \(consensus) BPM")
        let beatnet = try #require(analysis.analyses.first { $0.detector == "beatnet" })
        let own = try #require(beatnet.bpm)
        try #require(TempoRelation.matches(own, bpm / 2), "beatnet's own tempo \(own) BPM")
        let found = try #require(beatnet.beats).times
        let expected = Synth.beatTimes(startBPM: bpm, endBPM: bpm, seconds: seconds).filter { $0 > 2 && $0 < seconds - 1 }
        let missed = expected.filter { beat in !found.contains { abs($0 - beat) <= 0.07 } }
        #expect(missed.count <= expected.count / 20, "missed \(missed.count) of \(expected.count): \(missed.prefix(8))")
    }
}
