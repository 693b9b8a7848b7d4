import Foundation
import TactusAudio
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct QueryTests {
    /// Songs whose consensus is exactly `tempo` (two detectors agreeing with confidence 1, so
    /// the weighted mean is exact), with a third detector elsewhere.
    static let tempi: [Double] = [60, 64.999, 65, 70, 129.9, 130, 135, 140, 140.1, 260, 280, 281]

    func library(_ directory: TemporaryDirectory) throws -> Library {
        let library = try Fixture.library(in: directory)
        try library.record(
            Self.tempi.enumerated().map { n, tempo in
                SongAnalyses(
                    song: Fixture.song(n),
                    analyses: [
                        Fixture.record("alpha", bpm: tempo, confidence: 1), Fixture.record("beta", bpm: tempo, confidence: 1),
                        Fixture.record("gamma", bpm: 500, confidence: 0.1),
                    ])
            })
        return library
    }

    func tempi(_ matches: [TempoMatch]) -> [Double] { matches.map(\.bpm) }

    @Test func rangesAreInclusiveAndOrderedByClosenessToTheCentre() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        for source in [TempoSource.consensus, .detector("alpha"), .agreement(minimum: 2)] {
            let matches = try library.query(TempoQuery(range: 130...140, source: source))
            // 135 first; 130 and 140 are equally close, the earlier song first.
            #expect(tempi(matches) == [135, 130, 140], "\(source)")
            #expect(matches.allSatisfy { $0.factor == 1 })
        }
    }

    @Test func octaveMatchesHalfAndDoubleWithTheirFactors() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        for source in [TempoSource.consensus, .detector("beta"), .agreement(minimum: 2)] {
            let matches = try library.query(TempoQuery(range: 130...140, source: source, octave: true, order: .bpm))
            // By matched tempo (bpm / factor), ties in the order songs were added.
            #expect(tempi(matches) == [65, 130, 260, 135, 70, 140, 280], "\(source)")
            for match in matches {
                #expect(match.factor == (match.bpm < 130 ? 0.5 : match.bpm > 140 ? 2 : 1))
                #expect((130...140).contains(match.matchedBPM))
            }
        }
    }

    @Test func aDirectMatchWinsOverAnOctaveOneWhenRangesOverlap() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        // 60...130 overlaps its own halves and doubles: 65 and 70 are in the range itself.
        let matches = try library.query(TempoQuery(range: 60...130, octave: true, order: .bpm))
        #expect(Set(matches.map(\.song)).count == matches.count)
        #expect(matches.filter { $0.factor == 1 }.map(\.bpm) == [60, 64.999, 65, 70, 129.9, 130])
        #expect(matches.filter { $0.factor == 2 }.map(\.bpm) == [135, 140, 140.1, 260])
    }

    @Test func orderingByBPMAndPaging() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let all = try library.query(TempoQuery(range: 60...300, order: .bpm))
        #expect(tempi(all) == Self.tempi)
        var pages = [TempoMatch]()
        for page in 0..<5 {
            pages += try library.query(TempoQuery(range: 60...300, order: .bpm, limit: 3, offset: page * 3))
        }
        #expect(pages == all)
        #expect(try library.query(TempoQuery(range: 60...300, order: .bpm, limit: 0)).isEmpty)
        let closest = try library.query(TempoQuery(range: 60...300, limit: 2))
        #expect(tempi(closest) == [140.1, 140])  // the centre is 180
    }

    /// An offset whose sum with the limit would overflow SQLite's integers is refused as a
    /// value out of range, not run into a "datatype mismatch".
    @Test func anOffsetBeyondTheMaximumIsRefused() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        for order in [TempoOrder.bpm, .closeness] {
            #expect(throws: StoreError.invalidValue(field: "offset", value: "\(Int.max)", accepted: "a count of at most 1000000000")) {
                try library.query(TempoQuery(range: 60...300, order: order, limit: 10, offset: .max))
            }
        }
        #expect(try library.query(TempoQuery(range: 60...300, limit: 10, offset: TempoQuery.maxOffset)).isEmpty)
    }

    @Test func matchesCarryTheSongsTagsAndFile() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let match = try #require(try library.query(TempoQuery(range: 135...135)).first)
        let song = Fixture.song(6)
        #expect(match.song == song.id)
        #expect(match.title == song.tags.title)
        #expect(match.artist == song.tags.artist)
        #expect(match.file == song.fileName)
        #expect(match.durationS == song.durationS)
        #expect(match.detector == "consensus")
        #expect(match.detectors == ["alpha", "beta"])
        let json = String(decoding: try JSONEncoder().encode(match), as: UTF8.self)
        for key in ["\"song\"", "\"bpm\"", "\"factor\"", "\"detector\"", "\"title\"", "\"artist\"", "\"file\""] {
            #expect(json.contains(key))
        }
        #expect(try JSONDecoder().decode(TempoMatch.self, from: Data(json.utf8)) == match)
    }

    @Test func agreementNeedsThatManyDetectorsBehindTheConsensus() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        let songs: [(Double?, Double?, Double?)] = [
            (120, 121, 90),  // two agree; gamma is elsewhere
            (120, 122, 119),  // three agree
            (60, 61, 62),  // three agree at half the range
            (120, nil, nil),  // one detector only
            (122, 126, 200),  // two agree on about 124 (126 alone is out of the range)
        ]
        try Fixture.populate(library, count: songs.count) { songs[$0] }
        func found(_ minimum: Int, octave: Bool) throws -> [SongID] {
            try library.query(TempoQuery(range: 115...125, source: .agreement(minimum: minimum), octave: octave, order: .bpm))
                .map(\.song).sorted()
        }
        let ids = (0..<5).map(Fixture.songID)
        #expect(try found(1, octave: false) == [ids[0], ids[1], ids[3], ids[4]].sorted())
        #expect(try found(2, octave: false) == [ids[0], ids[1], ids[4]].sorted())
        #expect(try found(3, octave: false) == [ids[1]])
        #expect(try found(3, octave: true) == [ids[1], ids[2]].sorted())
        #expect(try found(4, octave: true) == [])

        let matches = try library.query(TempoQuery(range: 115...125, source: .agreement(minimum: 3), octave: true))
        let half = try #require(matches.first { $0.song == ids[2] })
        #expect(half.factor == 0.5)
        #expect(half.bpm == (try library.consensus(of: ids[2]))?.bpm)
        #expect(half.detectors == ["alpha", "beta", "gamma"])
        #expect(half.detector == "agree")
    }

    @Test func aDetectorWithSeveralVersionsGivesEachSongOnce() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try library.record(
            Fixture.song(1),
            analyses: [Fixture.record("alpha", bpm: 121), Fixture.record("alpha", bpm: 130, version: "2")])
        let matches = try library.query(TempoQuery(range: 115...135, source: .detector("alpha")))
        #expect(tempi(matches) == [121])
        #expect(try library.query(TempoQuery(range: 115...135, source: .detector("nobody"))).isEmpty)
    }

    /// Limited queries read the index outwards from the centre and stop early; whatever the
    /// source, octave and order, their pages must be slices of the complete answer.
    @Test func pagesAreSlicesOfTheCompleteAnswer() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        var random = SeededGenerator(seed: 7)
        let tempo = { (base: Double) -> Double in (base * Double.random(in: 0.9...1.1, using: &random) * 10).rounded() / 10 }
        try library.record(
            (0..<300).map { n in
                let base = Double.random(in: 50...250, using: &random)
                var analyses = [
                    Fixture.record("alpha", bpm: tempo(base)), Fixture.record("beta", bpm: tempo(base)),
                    Fixture.record("gamma", bpm: tempo(base * 2)),
                ]
                if n % 3 == 0 { analyses.append(Fixture.record("alpha", bpm: tempo(base), version: "2")) }
                if n % 5 == 0 { analyses.append(Fixture.record("alpha", bpm: tempo(base / 2), preset: "classic")) }
                return SongAnalyses(song: Fixture.song(n), analyses: analyses)
            })
        let sources: [TempoSource] = [.consensus, .detector("alpha"), .detector("gamma"), .agreement(minimum: 2)]
        for source in sources {
            for octave in [false, true] {
                for order in TempoOrder.allCases where !(order == .agreement && source.isDetector) {
                    let complete = try library.query(TempoQuery(range: 110...140, source: source, octave: octave, order: order))
                    #expect(Set(complete.map(\.song)).count == complete.count)
                    #expect(complete.count > 10)
                    for (limit, offset) in [(1, 0), (7, 0), (7, 7), (10, 25), (50, 3)] {
                        let page = try library.query(
                            TempoQuery(range: 110...140, source: source, octave: octave, order: order, limit: limit, offset: offset))
                        let expected = Array(complete.dropFirst(offset).prefix(limit))
                        #expect(page == expected, "\(source) octave \(octave) \(order) limit \(limit) offset \(offset)")
                    }
                }
            }
        }
    }

    /// Every order sorts every match of the range (not only a page of them) by its key, either
    /// way, ties in the order songs entered the library (reversed too when descending); songs
    /// without an artist or a confidence last both ways; pages are slices of the whole answer.
    @Test func everyOrderSortsTheWholeAnswerEitherWayAndPagesAreItsSlices() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        var random = SeededGenerator(seed: 11)
        let words = ["apple", "Banana", "cherry", "date", "Elder", "fig"]
        var number = [SongID: Int]()
        try library.record(
            (0..<200).map { n in
                var song = Fixture.song(n, duration: Double(Int.random(in: 60...90, using: &random)))
                song.tags.title = n % 9 == 0 ? nil : words.randomElement(using: &random)
                song.tags.artist = n % 4 == 0 ? nil : words.randomElement(using: &random)!.uppercased()
                number[song.id] = n
                let base = Double.random(in: 100...160, using: &random).rounded()
                let spread = [1.0, 1.02, 1.3][Int.random(in: 0...2, using: &random)]
                return SongAnalyses(
                    song: song,
                    analyses: [
                        Fixture.record("alpha", bpm: base, confidence: Double(Int.random(in: 0...4, using: &random)) / 4),
                        Fixture.record("beta", bpm: base * spread, confidence: 0.5),
                        Fixture.record("gamma", bpm: n % 3 == 0 ? nil : base / spread),
                    ])
            })
        /// A key that sorts like the store: nil (no artist, no confidence) last either way.
        enum Key: Comparable {
            case value(Double), text(String), none
        }
        func key(_ match: TempoMatch, _ order: TempoOrder, centre: Double) -> Key {
            switch order {
            case .closeness: .value(abs(match.matchedBPM - centre))
            case .bpm: .value(match.matchedBPM)
            case .newest: .value(0)
            case .title: .text((match.title ?? match.file).lowercased())
            case .artist: match.artist.map { .text($0.lowercased()) } ?? .none
            case .duration: .value(match.durationS)
            case .confidence: match.confidence.map { .value($0) } ?? .none
            case .agreement: .value(Double(match.detectors.count))
            }
        }
        for source in [TempoSource.consensus, .detector("alpha"), .agreement(minimum: 2)] {
            for octave in [false, true] {
                for order in TempoOrder.allCases where !(order == .agreement && source.isDetector) {
                    for descending in [false, true] {
                        let query = TempoQuery(range: 115...145, source: source, octave: octave, order: order, descending: descending)
                        let complete = try library.query(query)
                        let label = "\(source) octave \(octave) \(order) descending \(descending)"
                        #expect(complete.count > 20, "\(label)")
                        #expect(Set(complete.map(\.song)).count == complete.count, "\(label)")
                        if source.isDetector { #expect(complete.allSatisfy { $0.confidence != nil }, "\(label)") }
                        for (a, b) in zip(complete, complete.dropFirst()) {
                            let (ka, kb) = (key(a, order, centre: 130), key(b, order, centre: 130))
                            // Newest is by song alone: the last added first.
                            let newestFirst = (order == .newest) != descending
                            let sorted: Bool =
                                if ka == kb { newestFirst ? number[a.song]! > number[b.song]! : number[a.song]! < number[b.song]! }
                                else if ka == .none || kb == .none { kb == .none }
                                else { descending ? ka > kb : ka < kb }
                            #expect(sorted, "\(label): \(a.title ?? a.file) before \(b.title ?? b.file)")
                        }
                        for (limit, offset) in [(1, 0), (7, 7), (10, 25)] {
                            var paged = query
                            paged.limit = limit
                            paged.offset = offset
                            #expect(try library.query(paged) == Array(complete.dropFirst(offset).prefix(limit)), "\(label) \(limit) \(offset)")
                        }
                    }
                }
            }
        }
        #expect(throws: StoreError.self) { try library.query(TempoQuery(range: 100...200, source: .detector("alpha"), order: .agreement)) }
    }

    /// The histogram counts every match (whatever the limit) by its matched tempo, in bins
    /// that are multiples of the width, empty bins between included.
    @Test func theHistogramCountsEveryMatchByItsMatchedTempo() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let query = TempoQuery(range: 130...140, octave: true, order: .bpm, limit: 1)
        let histogram = try library.histogram(of: query, binWidth: 5)
        // Matched tempi: 130 (from 65), 130, 130 (from 260), 135, 140 (from 70), 140, 140 (from 280).
        var everything = query
        everything.limit = nil
        let matched = try library.query(everything).map(\.matchedBPM)
        #expect(histogram.total == matched.count && matched.count == 7)
        #expect(histogram.bins.map(\.lower) == [130, 135, 140])
        #expect(histogram.bins.map(\.count) == [3, 1, 3])
        #expect(histogram.bins.allSatisfy { $0.width == 5 })
        let fine = try library.histogram(of: TempoQuery(range: 60...70), binWidth: 1)
        #expect(fine.bins.map(\.lower) == Array(stride(from: 60.0, through: 70, by: 1)))
        #expect(fine.bins.map(\.count) == [1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1])
        let detector = try library.histogram(of: TempoQuery(range: 100...1000, source: .detector("gamma")), binWidth: 100)
        #expect(detector.total == Self.tempi.count && detector.bins.map(\.lower) == [500])
        let none = try library.histogram(of: TempoQuery(range: 900...1000), binWidth: 1)
        #expect(none.total == 0 && none.bins.isEmpty)
        for width in [0, 0.05, 1001, .nan] {
            #expect(throws: StoreError.self) { try library.histogram(of: query, binWidth: width) }
        }
    }

    @Test func invalidQueriesAreRefused() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        #expect(throws: StoreError.bpmOutOfRange(field: "range.upper", value: 1200)) {
            try library.query(TempoQuery(range: 100...1200))
        }
        #expect(throws: StoreError.bpmOutOfRange(field: "range.lower", value: 0)) {
            try library.query(TempoQuery(range: 0...100))
        }
        #expect(throws: StoreError.invalidValue(field: "agree", value: "0", accepted: "a number of detectors >= 1")) {
            try library.query(TempoQuery(range: 100...120, source: .agreement(minimum: 0)))
        }
        #expect(throws: StoreError.invalidValue(field: "limit", value: "-1", accepted: "a count >= 0")) {
            try library.query(TempoQuery(range: 100...120, limit: -1))
        }
    }
}

extension TempoSource {
    var isDetector: Bool {
        if case .detector = self { return true }
        return false
    }
}
