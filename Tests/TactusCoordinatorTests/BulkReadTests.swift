import TactusLibraryService
import TactusProtocol
import Testing

@testable import TactusCoordinator

/// Reads that go through many songs have threads of their own, so that other clients' small
/// reads never wait behind them.
@Suite struct BulkReadTests {
    @Test func readsOfManySongsAreBulkAndSmallOnesAreNot() {
        #expect(CoordinatorLoop.isBulk(.compare(CompareRequest())))
        #expect(CoordinatorLoop.isBulk(.playlist(PlaylistQuery(cadence: 160, minutes: 30))))
        #expect(CoordinatorLoop.isBulk(.query(QueryRequest(minBpm: 0, maxBpm: 1000, limit: 2_000))))
        #expect(CoordinatorLoop.isBulk(.query(QueryRequest(minBpm: 0, maxBpm: 1000, limit: 5, histogram: 1))))

        #expect(!CoordinatorLoop.isBulk(.compare(CompareRequest(song: "0123456789abcdef"))))
        #expect(!CoordinatorLoop.isBulk(.query(QueryRequest(minBpm: 0, maxBpm: 1000))))
        #expect(!CoordinatorLoop.isBulk(.query(QueryRequest(minBpm: 120, maxBpm: 130, limit: CoordinatorLoop.largestSmallQuery))))
        #expect(!CoordinatorLoop.isBulk(.result(ResultRequest(song: "0123456789abcdef"))))
        #expect(!CoordinatorLoop.isBulk(.job(1)))
        #expect(!CoordinatorLoop.isBulk(.jobs(song: "0123456789abcdef")))
    }
}
