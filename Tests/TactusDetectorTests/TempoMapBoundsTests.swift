import Foundation
import TactusDetector
import Testing

/// A tempo map is made by the coordinator from windows that workers send: any number of them,
/// in any order, with any values. Its work stays bounded and it never fails.
@Suite struct TempoMapBoundsTests {
    func analysis(_ windows: [AnalysisWindow], bpm: Double = 120) -> TempoAnalysis {
        TempoAnalysis(
            descriptor: DetectorDescriptor(name: "hostile", version: "1", summary: "test", specific: []), params: ParameterSet(),
            output: DetectorOutput(bpm: bpm, confidence: 0.5, candidates: [TempoCandidate(bpm: bpm, strength: 1)], windows: windows),
            seconds: 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aMillionWindowsInAnyOrderWithNonsenseAmongThemGiveAMapQuickly() throws {
        var generator = SystemRandomNumberGenerator()
        var windows = (0..<1_000_000).map { index in
            AnalysisWindow(startS: Double(index) * 3, durationS: 12, energy: 0.01, bpm: index < 500_000 ? 120 : 150, strength: 0.5)
        }
        windows.shuffle(using: &generator)
        windows += [
            AnalysisWindow(startS: .nan, durationS: 12, energy: 0, bpm: 120, strength: 0.5),
            AnalysisWindow(startS: 10, durationS: .infinity, energy: 0, bpm: 120, strength: .nan),
            AnalysisWindow(startS: 20, durationS: 12, energy: 0, bpm: -5, strength: 0.5),
        ]
        let started = ContinuousClock.now
        let map = try #require(TempoMap.of([analysis(windows)], consensus: 120))
        print("a million windows mapped in \(ContinuousClock.now - started)")
        #expect(map.segments.count == 2 && map.segments.allSatisfy(\.isSteady))
        #expect(abs(map.segments[0].endS - 1_500_000) < 20_000, "\(map.segments)")
        // A detector whose tempo is no number is left out, not a crash.
        #expect(TempoMap.of([analysis(windows, bpm: -1)], consensus: 120) == nil)
    }
}
