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

    /// A profile of 10^20 hours (attack round 6: its description trapped converting the
    /// minutes to `Int`, killing the coordinator) is refused with its length, and so is one
    /// over 100,000 minutes (the most a request's `minutes` may ask); 100,000 are accepted.
    @Test func refusesProfilesOfMoreThan100000MinutesSayingHowLong() throws {
        for spec in ["99999999999999999999h@170", "1000000000m@160", "1000h@150,667h@160"] {
            #expect {
                try CadenceProfile(parsing: spec)
            } throws: { error in
                guard case .invalidProfile(_, let reason) = error as? StoreError else { return false }
                return reason.contains("more than the 100000 minutes")
            }
        }
        #expect(try CadenceProfile(parsing: "1000h@150,40000m@160").totalS == 100_000 * 60)
        #expect(CadenceProfile(segments: [.init(cadence: 160, durationS: 6e21)]).description == "1e+20m@160")
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

    @Test func halfTimeSongsCountAndRunOutSegmentsAreFilledBeyondTheTolerance() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let playlist = try library.playlist(PlaylistRequest(profile: .constant(cadence: 170, minutes: 20), tolerance: 0.04))
        // The three songs within 4 % first (85 at half time), then the nearest others, flagged.
        #expect(Set(playlist.entries.prefix(3).map(\.match.bpm)) == [170, 171, 85])
        #expect(playlist.entries.first { $0.match.bpm == 85 }?.match.factor == 0.5)
        #expect(playlist.entries.prefix(3).allSatisfy { $0.fits })
        #expect(playlist.entries.dropFirst(3).map(\.match.bpm) == [160, 153, 151, 150])
        #expect(playlist.entries.dropFirst(3).allSatisfy { !$0.fits && $0.offPct < -4 })
        let fill = try #require(playlist.fills.first)
        #expect(fill.filledS == 1260 && !fill.isShort && fill.beyondToleranceS == 720)
        #expect(fill.maxOffPct == 20.0 / 170 * 100)
        #expect(playlist.isComplete)
    }

    @Test func strictPlaylistsTakeOnlySongsWithinTheTolerance() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        let playlist = try library.playlist(PlaylistRequest(profile: .constant(cadence: 170, minutes: 20), tolerance: 0.04, strict: true))
        #expect(Set(playlist.entries.map(\.match.bpm)) == [170, 171, 85])
        #expect(playlist.entries.allSatisfy { $0.fits })
        #expect(playlist.fills.map(\.isShort) == [true])
        #expect(playlist.fills.map(\.filledS) == [540])
    }

    /// The bug of issue 14: a `10m@150,5m@170,10m@160` profile started its 170 segment at 6:53
    /// (the 150 songs ran out) and ran it 6:18 (its last song ran on). Every segment now starts
    /// within half a song of its time, its songs reported with their distance from the cadence.
    @Test func segmentsStartWhenTheProfileSaysThem() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        // 7 minutes of songs near 150, many near 170 and 160, and songs far from every cadence.
        var songs = [SongAnalyses]()
        let groups: [(tempi: [Double], seconds: Double)] = [
            ([149, 151, 148, 152], 105), ([170, 171, 169, 172, 85.5, 168, 173], 190), ([160, 161, 159, 162, 80, 158, 163, 81], 215),
            ([120, 125, 130, 135, 140], 200),
        ]
        var n = 0
        for group in groups {
            for tempo in group.tempi {
                songs.append(SongAnalyses(song: Fixture.song(n, duration: group.seconds), analyses: [Fixture.record("alpha", bpm: tempo)]))
                n += 1
            }
        }
        try library.record(songs)
        let playlist = try library.playlist(PlaylistRequest(profile: try CadenceProfile(parsing: "10m@150,5m@170,10m@160")))
        #expect(playlist.fills.map(\.plannedStartS) == [0, 600, 900])
        // A segment ends within half a song of its time: half the longest song (215 s) at most.
        let halfSong = 215.0 / 2
        for (fill, entries) in zip(playlist.fills, [150.0, 170, 160].map { cadence in playlist.entries.filter { $0.cadence == cadence } }) {
            #expect(abs(fill.startS - fill.plannedStartS) <= halfSong, "segment at \(fill.segment.cadence)")
            #expect(abs(fill.startS + fill.filledS - (fill.plannedStartS + fill.segment.durationS)) <= halfSong)
            #expect(!fill.isShort)
            #expect(fill.maxOffPct == entries.map { abs($0.offPct) }.max())
            #expect(entries.first?.startS == fill.startS)
        }
        // The 150 songs (7 minutes) ran out: the segment was filled with the nearest others, beyond 4 %.
        let first = playlist.fills[0]
        #expect(first.beyondToleranceS > 0)
        #expect(playlist.entries.filter { $0.cadence == 150 && $0.fits }.count == 4)
        #expect(playlist.entries.filter { $0.cadence == 150 && !$0.fits }.allSatisfy { abs($0.offPct) > 4 })
        // The 170 segment holds only songs within the tolerance and ends by 15:00 within half a song.
        #expect(playlist.entries.filter { $0.cadence == 170 }.allSatisfy { $0.fits })
        #expect(Set(playlist.entries.map(\.match.song)).count == playlist.entries.count)
        for entry in playlist.entries {
            #expect(abs(entry.offPct - (entry.match.matchedBPM - entry.cadence) / entry.cadence * 100) < 1e-9)
        }
        // Consecutive: each song starts when the one before it ends.
        for (a, b) in zip(playlist.entries, playlist.entries.dropFirst()) {
            #expect(b.startS == a.startS + a.match.durationS)
        }
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
