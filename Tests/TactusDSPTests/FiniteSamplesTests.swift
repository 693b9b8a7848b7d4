import Testing
import TactusDSP
import TactusDetector

@Suite struct FiniteSamplesTests {
    @Test func finiteBlocksPassThroughUntouched() {
        var finite = FiniteSamples()
        let block: [Float] = [0.5, -1, 0, 1e-30]
        var seen: [Float] = []
        block.withUnsafeBufferPointer { samples in
            finite.process(samples) { clean in
                #expect(clean.baseAddress == samples.baseAddress)  // no copy
                seen = Array(clean)
            }
        }
        #expect(seen == block)
    }

    /// A signal its feeder has made finite already is passed on without a look (so a
    /// non-finite sample, which such a feeder never sends, would pass too); any other is checked.
    @Test func aSignalSaidToBeFiniteIsNotCheckedAgain() {
        let block: [Float] = [0.25, .nan]
        for (trusted, expectSilenced) in [(true, false), (false, true)] {
            var finite = FiniteSamples(format: SignalFormat(sampleRate: 8000, expectedFrames: nil, samplesAreFinite: trusted))
            var seen: [Float] = []
            block.withUnsafeBufferPointer { samples in finite.process(samples) { seen = Array($0) } }
            #expect(seen[1].isNaN != expectSilenced)
        }
    }

    @Test func nonFiniteSamplesBecomeSilence() {
        var finite = FiniteSamples()
        let block: [Float] = [0.25, .nan, -.infinity, 0.5, .infinity]
        var seen: [Float] = []
        block.withUnsafeBufferPointer { samples in finite.process(samples) { seen = Array($0) } }
        #expect(seen == [0.25, 0, 0, 0.5, 0])
    }

    /// The check runs sixteen samples at a time: a non-finite sample anywhere in a long block
    /// (in a full vector or in the tail), among large finite ones, is still found.
    @Test(arguments: [Float.nan, .infinity, -.infinity, -Float.nan])
    func aNonFiniteSampleAnywhereInALongBlockIsFound(bad: Float) {
        var finite = FiniteSamples()
        let clean = (0..<37).map { Float($0 % 2 == 0 ? 1 : -1) * Float.greatestFiniteMagnitude / Float($0 + 1) }
        for position in clean.indices {
            var block = clean
            block[position] = bad
            var seen: [Float] = []
            block.withUnsafeBufferPointer { samples in finite.process(samples) { seen = Array($0) } }
            var expected = clean
            expected[position] = 0
            #expect(seen == expected, "non-finite sample at \(position) of \(block.count)")
        }
        var seen: [Float] = []
        clean.withUnsafeBufferPointer { samples in finite.process(samples) { seen = Array($0) } }
        #expect(seen == clean)
    }
}
