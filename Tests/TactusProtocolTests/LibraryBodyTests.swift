import Foundation
import TactusModel
import TactusProtocol
import Testing

/// The library commands' bodies: requests that stand for the library's own queries, answers
/// that are the library's own JSON.
@Suite("Library bodies") struct LibraryBodyTests {
    /// The JSON object of a reply's body frame.
    private func body(_ response: ClientReply.Response) throws -> [String: Any] {
        let frames = try ClientReply(requestID: [], response).frames()
        return try #require(try JSONSerialization.jsonObject(with: Data(frames[4])) as? [String: Any])
    }

    /// The JSON object the library's type writes for `value` with the encoder of the CLI's `--json`.
    private func storeJSON(_ value: some Encodable) throws -> NSDictionary {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try #require(try JSONSerialization.jsonObject(with: encoder.encode(value)) as? NSDictionary)
    }

    @Test(arguments: [
        TempoQuery(range: 120...130),
        TempoQuery(range: 120...130, source: .detector("comb-filter"), octave: true, order: .bpm, limit: 50, offset: 10),
        TempoQuery(range: 60.5...61, source: .agreement(minimum: 2), limit: 0),
        TempoQuery(range: 1...1000, order: .title, descending: true, limit: 50, offset: 50),
        TempoQuery(range: 100...200, source: .agreement(minimum: 2), order: .agreement, descending: true, limit: 5),
    ])
    func aQuerySurvivesTheWire(query: TempoQuery) throws {
        var sent = query
        if sent.limit == nil { sent.limit = 100 }
        let frames = try ClientRequest(.query(QueryRequest(sent))).frames()
        guard let received = try ClientRequest(frames: frames).body.request(QueryCommand.self) else {
            Issue.record("not a query")
            return
        }
        #expect(received.tempoQuery == sent)
    }

    @Test func anEmptyQueryMeansTheConsensusByClosenessAHundredAtATime() {
        #expect(QueryRequest(minBpm: 120, maxBpm: 130).tempoQuery == TempoQuery(range: 120...130, limit: 100))
    }

    @Test func aCadenceOrAProfileBecomesTheLibrarysPlaylistRequest() throws {
        #expect(
            try PlaylistQuery(cadence: 170).playlistRequest()
                == PlaylistRequest(profile: .constant(cadence: 170, minutes: 30), tolerance: 0.04, source: .consensus))
        let request = try PlaylistQuery(profile: "10m@150,5m@170,90s@160", tolerance: 0.02, detector: "comb-filter")
            .playlistRequest()
        #expect(request.profile.segments.map(\.cadence) == [150, 170, 160])
        #expect(request.profile.segments.map(\.durationS) == [600, 300, 90])
        #expect(request.tolerance == 0.02 && request.source == .detector("comb-filter"))
    }

    @Test(arguments: ["10m@fast", "10m", "0m@170", "10m@170,,5m@150", "10m@2000"])
    func aMalformedProfileIsAnErrorNamingIt(profile: String) throws {
        let error = #expect(throws: ProtocolError.self) { try PlaylistQuery(profile: profile).playlistRequest() }
        guard case .invalidBody(command: "playlist", field: "profile", let detail)? = error else {
            Issue.record("expected a profile error, got \(String(describing: error))")
            return
        }
        #expect(detail.contains(profile), "\(detail)")
    }

    @Test func queryAnswersAreTheLibrarysOwnMatches() throws {
        let json = try body(.query(SongList(songs: [Examples.consensusMatch, Examples.halfTimeMatch])))
        let songs = try #require(json["songs"] as? [NSDictionary])
        #expect(songs == [try storeJSON(Examples.consensusMatch), try storeJSON(Examples.halfTimeMatch)])
        // Written by the library, not decoded: the tempo in the range, and absent tags as null.
        #expect(songs[1]["matched_bpm"] as? Double == 170.2)
        #expect(songs[1]["title"] is NSNull && songs[1]["artist"] is NSNull)
    }

    @Test func compareAnswersHoldTheSongOrTheLibraryNeverBoth() throws {
        let song = try body(.compare(CompareResponse(song: Examples.songComparison)))
        #expect(Set(song.keys) == ["song"])
        #expect(song["song"] as? NSDictionary == (try storeJSON(Examples.songComparison)))

        let library = try body(.compare(CompareResponse(library: Examples.libraryComparison)))
        #expect(Set(library.keys) == ["library"])
        #expect(library["library"] as? NSDictionary == (try storeJSON(Examples.libraryComparison)))
    }

    @Test func playlistAndTruthAnswersAreTheLibrarysOwnJSON() throws {
        let playlist = try body(.playlist(PlaylistResponse(playlist: Examples.playlist)))
        #expect(playlist["playlist"] as? NSDictionary == (try storeJSON(Examples.playlist)))

        let truth = try body(.truth(TruthResponse(song: Examples.song, reference: Examples.reference)))
        let reference = try #require(truth["reference"] as? NSDictionary)
        #expect(reference == (try storeJSON(Examples.reference)))
        #expect(reference["set_at"] as? String == "2025-11-19T12:00:00Z")
        // Without a reference tempo the field is left out.
        #expect(Set(try body(.truth(TruthResponse(song: Examples.song, reference: nil))).keys) == ["song"])
    }
}
