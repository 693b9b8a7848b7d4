import Foundation
import TactusModel
import TactusProtocol
import Testing

@testable import TactusWeb

/// What the gateway's event streams hold for a client that does not read is bounded in bytes:
/// each event's body is at most 64 KiB. (The fourth attack round took a gateway to 21.8 GB with
/// 250 streams that never read and events of 1.2 MB.)
@Suite struct EventHubTests {
    @Test func aScanProgressEventOfLongPathsIsListedShorterForTheStreams() throws {
        let folder = "/music/" + (0..<10).map { _ in String(repeating: "d", count: 250) }.joined(separator: "/")
        let skipped = (0..<1_000).map { ScanSkip(path: "\(folder)/\($0).mp3", reason: "not audio", code: .unsupportedFormat) }
        let summary = ScanSummary(skipped: skipped, files: 1_000, looked: 1_000).listingSkips()
        let message = try #require(EventHub.message(.scanProgress(summary)))
        #expect(message.json.utf8.count <= EventHub.maxStreamedEventBytes)
        let listed = try JSONDecoder().decode(ScanSummary.self, from: Data(message.json.utf8))
        #expect(listed.skippedCount == 1_000 && !listed.skipped.isEmpty && listed.skipped == Array(skipped.prefix(listed.skipped.count)))
        // A small event is streamed as it is.
        let failed = JobFailedEvent(
            job: 1, song: SongID(hashing: Data("s".utf8)), detector: "comb-filter", attempts: 1,
            error: ErrorBody(code: .corrupt, message: "song.wav: bad data"))
        let small = try #require(EventHub.message(.jobFailed(failed)))
        #expect(small.json == String(decoding: try Event.jobFailed(failed).frames()[3], as: UTF8.self))
    }
}
