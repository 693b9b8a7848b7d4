import Foundation
import TactusDetector
import TactusModel
import TactusProtocol
import Testing
@testable import TactusCoordinator

/// No reply leaves the coordinator larger than a client accepts: such an answer is replaced by
/// a `too-large` error that says how large it would have been, and the lists that grow with what
/// anyone may place in a library folder are cut.
@Suite struct ReplySizeTests {
    /// A query answer of `count` matches, each with a title of `titleLength` characters.
    static func queryReply(count: Int, titleLength: Int) -> ClientReply {
        let title = String(repeating: "x", count: titleLength)
        let matches = (0..<count).map { n in
            TempoMatch(
                song: SongID(hashing: Data("song \(n)".utf8)), bpm: 120, factor: 1, detector: "consensus", detectors: [],
                title: title, artist: nil, file: "song-\(n).flac", durationS: 180)
        }
        return ClientReply(requestID: [1, 2, 3], .query(SongList(songs: matches)))
    }

    @Test func anAnswerOverTheBodyLimitBecomesATooLargeError() throws {
        let large = Self.queryReply(count: 5_000, titleLength: 1_000)
        let frames = try CoordinatorLoop.framesWithinBodyLimit(large)
        let reply = try ClientReply(frames: frames)
        guard case .error(let error) = reply.outcome else {
            Issue.record("an answer over 4 MiB went out as it was")
            return
        }
        #expect(error.code == .tooLarge && reply.command == "query" && reply.requestID == [1, 2, 3])
        #expect(error.message.contains("the answer to 'query' would be") && error.message.contains("over the 4194304 bytes"), "\(error.message)")
        // One under the limit goes out unchanged.
        let small = Self.queryReply(count: 100, titleLength: 1_000)
        #expect(try CoordinatorLoop.framesWithinBodyLimit(small) == (try small.frames()))
    }

    @Test func aResultListsSixteenLocationsAndCountsThemAll() throws {
        let locations = (0..<1_500).map { SongLocation(root: "/music", path: "copies/\($0).flac", byteSize: 1, mtimeNs: 0) }
        let song = SongID(hashing: Data("linked".utf8))
        let linked = ResultResponse(song: song, analyses: [], consensus: ConsensusTempo(bpm: nil, detectors: []), locations: locations)
        #expect(linked.locations == Array(locations.prefix(16)) && linked.locationCount == 1_500)
        #expect(String(decoding: try JSONEncoder().encode(linked), as: UTF8.self).contains("\"location_count\":1500"))
        let one = ResultResponse(song: song, analyses: [], consensus: ConsensusTempo(bpm: nil, detectors: []), locations: [locations[0]])
        #expect(one.locations?.count == 1 && one.locationCount == nil)
        #expect(!String(decoding: try JSONEncoder().encode(one), as: UTF8.self).contains("location_count"))
    }

    @Test func aScanReplyListsAThousandSkippedFilesAndCountsThemAll() throws {
        let skipped = (0..<2_500).map { ScanSkip(path: "/music/notes-\($0).txt", reason: "not audio", code: .unsupportedFormat) }
        let summary = ScanSummary(skipped: skipped, files: 2_500).listingSkips()
        #expect(summary.skipped == Array(skipped.prefix(ScanSummary.maxListedSkips)))
        #expect(summary.skippedCount == 2_500 && summary.skippedTotal == 2_500)
        let few = ScanSummary(skipped: Array(skipped.prefix(3)), files: 3).listingSkips()
        #expect(few.skipped.count == 3 && few.skippedCount == nil && few.skippedTotal == 3)
        // A planted folder of long paths (the fourth attack round's: 1,000 paths of 2.7 KB made
        // every scan's reply 5.6 MB): listed up to 256 KiB, and the reply stays small.
        let folder = "/music/" + (0..<10).map { _ in String(repeating: "d", count: 250) }.joined(separator: "/")
        let long = (0..<1_000).map { ScanSkip(path: "\(folder)/\($0)" + String(repeating: "n", count: 200) + ".mp3", reason: "not audio") }
        let planted = ScanSummary(skipped: long, files: 1_000).listingSkips()
        #expect(planted.skippedCount == 1_000 && planted.skipped.count < 100 && planted.skipped == Array(long.prefix(planted.skipped.count)))
        #expect(try JSONEncoder().encode(planted).count < ScanSummary.maxListedSkipBytes + 64 << 10)
    }
}
