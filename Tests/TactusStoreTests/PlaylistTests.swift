import Foundation
import TactusModel
import TactusTestSupport
import Testing
@testable import TactusStore

@Suite struct PlaylistTests {
    @Test func parsesProfiles() throws {
        let profile = try CadenceProfile(parsing: "10m@150, 5m@170,90s@160,1h@155,2@165")
        #expect(profile.segments.map(\.cadence) == [150, 170, 160, 155, 165])
        #expect(profile.segments.map(\.durationS) == [600, 300, 90, 3600, 120])
        #expect(profile.totalS == 4710)
        #expect(try CadenceProfile(parsing: "10m@150,5m@170").description == "10m@150,5m@170")
    }

    @Test(arguments: ["", "10m150", "10m@", "@150", "0m@150", "-5m@150", "10x@150", "10m@abc", "10m@2000", "10m@150,,5m@160"])
    func refusesMalformedProfiles(_ spec: String) {
        #expect(throws: StoreError.self) { try CadenceProfile(parsing: spec) }
    }

    /// Songs of 3 minutes at 150, 151, 153, 160, 170, 171, 85 (half of 170) and 120 BPM.
    func library(_ directory: TemporaryDirectory) throws -> Library {
        let library = try Fixture.library(in: directory)
        let tempi: [Double] = [150, 151, 153, 160, 170, 171, 85, 120]
        try library.record(
            tempi.enumerated().map { n, tempo in
                SongAnalyses(song: Fixture.song(n, duration: 180), analyses: [Fixture.record("alpha", bpm: tempo, confidence: 1)])
            })
        return library
    }

    @Test func followsTheProfileWithoutRepeatingASong() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let playlist = try library.playlist(
            PlaylistRequest(profile: try CadenceProfile(parsing: "6m@150,5m@170,3m@150"), tolerance: 0.03))
        #expect(Set(playlist.entries.map(\.match.song)).count == playlist.entries.count)
        #expect(playlist.entries.map(\.position) == Array(1...playlist.entries.count))
        // 150: the two closest (150, 151) fill 6 minutes; 170: 170 and 85 (both exactly at the
        // cadence, the earlier song first) fill 5 minutes; the last 150 segment takes 153.
        #expect(playlist.entries.map(\.match.bpm) == [150, 151, 170, 85, 153])
        #expect(playlist.entries.map(\.cadence) == [150, 150, 170, 170, 150])
        #expect(playlist.entries.map(\.startS) == [0, 180, 360, 540, 720])
        #expect(playlist.fills.map(\.filledS) == [360, 360, 180])
        #expect(playlist.isComplete)
        for entry in playlist.entries {
            #expect(abs(entry.match.matchedBPM - entry.cadence) <= 0.03 * entry.cadence)
        }
    }

    @Test func halfTimeSongsCountAndShortSegmentsAreReported() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let playlist = try library.playlist(PlaylistRequest(profile: .constant(cadence: 170, minutes: 20), tolerance: 0.04))
        #expect(Set(playlist.entries.map(\.match.bpm)) == [170, 171, 85])
        #expect(playlist.entries.first { $0.match.bpm == 85 }?.match.factor == 0.5)
        #expect(!playlist.isComplete)
        #expect(playlist.fills == [Playlist.Fill(segment: .init(cadence: 170, durationS: 1200), filledS: 540, isShort: true)])
    }

    @Test func refusesABadTolerance() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        #expect(throws: StoreError.self) {
            try library.playlist(PlaylistRequest(profile: .constant(cadence: 170, minutes: 20), tolerance: 0))
        }
        #expect(throws: StoreError.self) {
            try library.playlist(PlaylistRequest(profile: .constant(cadence: 170, minutes: -5)))
        }
    }
}
