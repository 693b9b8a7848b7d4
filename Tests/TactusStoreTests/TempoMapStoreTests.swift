import Foundation
import TactusDetector
import TactusModel
import TactusTestSupport
import Testing

@testable import TactusStore

/// The library keeps each song's tempo map with its consensus, made from the stored windows,
/// and `query` finds the songs whose tempo holds or changes.
@Suite struct TempoMapStoreTests {
    /// An analysis by `detector` whose 12 s windows every 3 s read `bpm(centre)`.
    func record(_ detector: String, seconds: Double = 120, _ bpm: (Double) -> Double) -> AnalysisRecord {
        let windows = stride(from: 0.0, through: seconds - 12, by: 3).map { start in
            AnalysisWindow(startS: start, durationS: 12, energy: 0.01, bpm: bpm(start + 6), strength: 0.5)
        }
        let output = DetectorOutput(
            bpm: bpm(seconds / 2), confidence: 0.8, candidates: [TempoCandidate(bpm: bpm(seconds / 2), strength: 1)], windows: windows)
        return AnalysisRecord(
            TempoAnalysis(descriptor: Fixture.descriptor(detector), params: ParameterSet(), output: output, seconds: 0.1), worker: nil,
            analyzedAt: Date(timeIntervalSince1970: 1_750_000_000))
    }

    @Test func aSongsMapIsStoredWithItsConsensusAndQueriesFilterByIt() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let steady = Fixture.song(1), stepping = Fixture.song(2), unknown = Fixture.song(3)
        _ = try library.record(steady, analyses: ["a", "b"].map { record($0) { _ in 124 } })
        _ = try library.record(stepping, analyses: ["a", "b"].map { record($0) { $0 < 60 ? 118 : 128 } })
        // A consensus without windows has no map, and matches neither filter.
        _ = try library.record(unknown, analyses: [Fixture.record("a", bpm: 125)].map {
            var record = $0
            record.analysis.windows = []
            return record
        })

        let steadyMap = try #require(try library.consensus(of: steady.id)?.tempoMap)
        #expect(steadyMap.stable && steadyMap.segments.count == 1 && abs(steadyMap.minBPM - 124) < 0.01)
        let steppingMap = try #require(try library.consensus(of: stepping.id)?.tempoMap)
        #expect(!steppingMap.stable && steppingMap.segments.count == 2)
        #expect(abs(steppingMap.segments[0].endS - 60) <= 2 && abs(steppingMap.segments[1].startBPM - 128) < 0.5)
        #expect(try library.consensus(of: unknown.id)?.tempoMap == nil)

        func found(_ stable: Bool?, _ source: TempoSource = .consensus) throws -> Set<SongID> {
            Set(try library.query(TempoQuery(range: 100...140, source: source, stable: stable)).map(\.song))
        }
        #expect(try found(nil) == [steady.id, stepping.id, unknown.id])
        #expect(try found(true) == [steady.id])
        #expect(try found(false) == [stepping.id])
        #expect(try found(true, .detector("a")) == [steady.id])
        #expect(try found(false, .agreement(minimum: 2)) == [stepping.id])
    }
}

extension ConsensusTempo {
    /// The consensus without its tempo map: the library makes the map from the windows it keeps
    /// (as 32-bit floats), so it differs in its last digits from one made in memory.
    var withoutMap: ConsensusTempo { ConsensusTempo(bpm: bpm, detectors: detectors, confidence: confidence) }
}
