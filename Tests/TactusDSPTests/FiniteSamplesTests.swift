import Testing
import TactusDSP

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

    @Test func nonFiniteSamplesBecomeSilence() {
        var finite = FiniteSamples()
        let block: [Float] = [0.25, .nan, -.infinity, 0.5, .infinity]
        var seen: [Float] = []
        block.withUnsafeBufferPointer { samples in finite.process(samples) { seen = Array($0) } }
        #expect(seen == [0.25, 0, 0, 0.5, 0])
    }
}
