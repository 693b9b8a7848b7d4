import TactusProtocol
import Testing

@testable import TactusLibraryService

/// A scan's tally counts every file skipped but keeps only the first of them, as many as a reply
/// lists: a root of 600,000 junk files once took the coordinator to 353 MB listing every one.
@Suite struct ScanTallyTests {
    @Test func skipsAreAllCountedAndListedUpToTheReplysLimit() {
        var plan = LibraryScan.Plan()
        plan.skipped = [ScanSkip(path: "/root/link", reason: "a symbolic link")]
        plan.skippedCount = 5  // the walk listed one of its five
        var tally = ScanTally(plan)
        for n in 0..<2_500 { tally.count(.skipped(ScanSkip(path: "/root/junk\(n)", reason: "not audio"))) }
        #expect(tally.skippedTotal == 2_505)
        #expect(tally.summary.skipped.count == ScanSummary.maxListedSkips)
        #expect(tally.summary.skippedCount == 2_505)

        // A progress event lists the skips since the previous one (the first of them), and
        // counts them all.
        let first = tally.progress(looked: 2_500, seconds: 1)
        #expect(first.skippedCount == 2_505)
        #expect(first.skipped.first?.path == "/root/link" && first.skipped.count <= ScanSummary.maxListedSkips)
        tally.count(.skipped(ScanSkip(path: "/root/late", reason: "not audio")))
        let second = tally.progress(looked: 2_501, seconds: 2)
        #expect(second.skipped.map(\.path) == ["/root/late"] && second.skippedCount == 2_506)

        let reply = tally.finished(moved: [], missing: 0, seconds: 3).listingSkips()
        #expect(reply.skippedTotal == 2_506 && reply.skipped.count <= ScanSummary.maxListedSkips)
    }

    @Test func aFewSkipsAreListedWithoutACount() {
        var tally = ScanTally(LibraryScan.Plan())
        tally.count(.skipped(ScanSkip(path: "/root/cover.jpg", reason: "not audio")))
        #expect(tally.summary.skipped.count == 1 && tally.summary.skippedCount == nil && tally.summary.skippedTotal == 1)
    }

    /// The paths a scan is asked for are kept once each, without those below a folder kept
    /// (a sibling whose name only starts like a folder's is not below it); many paths below one
    /// folder cost a lookup per folder of each (a quadratic comparison of 300,000 watched
    /// paths held every scan back, attack round 7, H1).
    @Test func outermostKeepsEachPathOnceAndNothingBelowAKeptFolder() {
        var targets: [(root: String, relative: String)] = (0..<50_000).map { ("/r", "flood/deep/file-\($0)") }
        targets += [("/r", "flood"), ("/r", "flood-b/x"), ("/r", "flood-b/x"), ("/s", ""), ("/s", "a/b"), ("/r", "other/c")]
        let kept = LibraryScan.outermost(targets)
        #expect(Set(kept.map { "\($0.root):\($0.relative)" }) == ["/r:flood", "/r:flood-b/x", "/s:", "/r:other/c"])
        #expect(kept.count == 4)
    }
}
