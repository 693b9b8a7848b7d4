import Foundation
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

/// `compare` over the library: how the files' BPM tags (reference tempi of source `tag`) agree
/// with each detector, and the tags that look wrong.
@Suite struct CompareTagsTests {
    @Test func tagsAreMeasuredAgainstEachDetectorAndWrongOnesListed() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        // alpha and beta find 120 for every song, gamma half of it.
        try Fixture.populate(library, count: 4) { _ in (120, 120.5, 60) }
        try library.setReference(120, for: Fixture.songID(0), source: "tag")    // right
        try library.setReference(121, for: Fixture.songID(1), source: "tag")    // right (an integer TBPM against 120.x)
        try library.setReference(60, for: Fixture.songID(2), source: "tag")     // an octave below
        try library.setReference(97, for: Fixture.songID(3), source: "tag")     // unrelated
        let comparison = try library.compareLibrary()
        let tags = try #require(comparison.tags)
        #expect(tags.songs == 4)
        let byDetector = Dictionary(uniqueKeysWithValues: tags.detectors.map { ($0.detector, $0) })
        #expect(Set(byDetector.keys) == ["alpha", "beta", "gamma", "consensus"])
        #expect(byDetector["alpha"]?.match == 0.5)
        #expect(byDetector["alpha"]?.octave == 0.25)
        #expect(byDetector["alpha"]?.unrelated == 0.25)
        #expect(byDetector["gamma"]?.match == 0.25)  // 60 is the tag of song 2
        #expect(byDetector["gamma"]?.octave == 0.5)
        #expect(tags.suspectsTotal == 2)
        #expect(Set(tags.suspects.map(\.song)) == [Fixture.songID(2), Fixture.songID(3)])
        #expect(tags.suspects.first { $0.song == Fixture.songID(2) }?.looks == "octave")
        #expect(tags.suspects.first { $0.song == Fixture.songID(3) }?.looks == "unrelated")
        #expect(tags.suspects.first { $0.song == Fixture.songID(3) }?.tag == 97)
    }

    @Test func withoutTagsThereIsNoTagSection() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        try Fixture.populate(library, count: 2) { _ in (120, 120, 60) }
        try library.setReference(120, for: Fixture.songID(0))
        #expect(try library.compareLibrary().tags == nil)
    }
}
