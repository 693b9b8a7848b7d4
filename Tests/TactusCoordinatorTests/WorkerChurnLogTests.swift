import Testing

@testable import TactusCoordinator

/// Worker join and loss lines under churn: the first ones of a window written, the rest counted
/// and summarised once the window is over, then lines written again.
@Suite struct WorkerChurnLogTests {
    let start = ContinuousClock.now

    @Test func pastTheBurstLinesAreCountedAndSummarisedOnceTheWindowIsOver() {
        var log = WorkerChurnLog()
        var written = 0
        for index in 0..<200 {
            let event: WorkerChurnLog.Event = index.isMultiple(of: 2) ? .joined : .lost
            if log.allows(event, at: start + .milliseconds(index * 10)) { written += 1 }
        }
        #expect(written == WorkerChurnLog.burst)
        let early = log.summary(at: start + .seconds(2))
        #expect(early == nil, "the window is not over")
        let summary = log.summary(at: start + WorkerChurnLog.window)
        #expect(summary?.joined == 80 && summary?.lost == 80)
        let again = log.summary(at: start + WorkerChurnLog.window + .seconds(1))
        #expect(again == nil, "a summary is given once")
        let next = log.allows(.joined, at: start + WorkerChurnLog.window + .seconds(1))
        #expect(next, "a new window writes again")
    }

    @Test func aQuietServerWritesEveryLineAndNeedsNoSummary() {
        var log = WorkerChurnLog()
        for minute in 0..<10 {
            let joined = log.allows(.joined, at: start + .seconds(minute * 60))
            let lost = log.allows(.lost, at: start + .seconds(minute * 60 + 30))
            let summary = log.summary(at: start + .seconds(minute * 60 + 45))
            #expect(joined && lost && summary == nil)
        }
    }
}
