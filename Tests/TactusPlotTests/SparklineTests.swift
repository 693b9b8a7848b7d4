import TactusDetector
import TactusPlot
import Testing

@Suite struct SparklineTests {
    @Test func eightLevelsFromMinimumToMaximum() {
        #expect(Sparkline.line([0, 1, 2, 3, 4, 5, 6, 7]) == "▁▂▃▄▅▆▇█")
        #expect(Sparkline.line([70, 0, 35]) == "█▁▅")
        #expect(Sparkline.line([5, nil, 5]) == "▄ ▄")
        #expect(Sparkline.line([nil, nil]) == "  ")
        #expect(Sparkline.line([]) == "")
        #expect(Sparkline.line([.infinity, 1, 2]) == " ▁█")
    }

    @Test func aGivenRangeClampsValuesOutsideIt() {
        #expect(Sparkline.line([-10, 0, 50, 100, 200], range: 0...100) == "▁▁▅██")
    }

    @Test func envelopeColumnsAreLevelsInDecibelsOfTheMeanEnergy() throws {
        // Four values per second over 4 s, into 4 columns: energies 1, 0.1, 0.01, 0 per second.
        let envelope = EnergyEnvelope(hopS: 0.25, values: [1, 1, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0, 0, 0, 0])
        let columns = Sparkline.columns(of: envelope, durationS: 4, columns: 4)
        #expect(columns.count == 4)
        #expect(abs(try #require(columns[0]) - 0) < 1e-6)
        #expect(abs(try #require(columns[1]) + 10) < 1e-5)
        #expect(abs(try #require(columns[2]) + 20) < 1e-5)
        #expect(try #require(columns[3]) == -120)
        // Eight columns over 8 s: the envelope covers only the first four.
        #expect(Sparkline.columns(of: envelope, durationS: 8, columns: 8).suffix(4) == [nil, nil, nil, nil])
    }

    @Test func windowColumnsTakeTheNearestCoveringWindow() {
        let windows = [
            AnalysisWindow(startS: 0, durationS: 4, energy: 1, bpm: 120, strength: 1),
            AnalysisWindow(startS: 3, durationS: 4, energy: 1, bpm: 130, strength: 1),
            AnalysisWindow(startS: 6, durationS: 4, energy: 1, bpm: nil, strength: 0),
        ]
        // Column centres at 1, 3, 5, 7, 9 s over 10 s; window centres at 2, 5 and 8 s.
        let columns = Sparkline.columns(of: windows, durationS: 10, columns: 5)
        #expect(columns == [120, 120, 130, nil, nil])
        #expect(Sparkline.line(columns) == "▁▁█  ")
        // Centres at 7.5 s (only the window without a tempo) and 22.5 s (no window): no values.
        #expect(Sparkline.columns(of: windows, durationS: 30, columns: 2) == [nil, nil])
    }
}
