import Foundation
import TactusModel
import TactusProtocol
import Testing

/// The `stretch` and `render` messages: a render asked for by song and tempo, its state, and its
/// file in the frame after the body once it is done.
@Suite struct StretchMessageTests {
    static func frames(_ command: String, _ body: String, _ binary: [[UInt8]] = []) -> [[UInt8]] {
        [Array("TACTUS1".utf8), Array(command.utf8), Array("s1".utf8), Array(body.utf8)] + binary
    }

    static func replyFrames(_ body: String, _ binary: [[UInt8]] = []) -> [[UInt8]] {
        [Array("TACTUS1".utf8), Array("render".utf8), Array("s1".utf8), Array("ok".utf8), Array(body.utf8)] + binary
    }

    /// The requests of SPEC.md's section 3.7, as `json.dumps` writes them.
    @Test func theSpecificationsExamplesAreAccepted() throws {
        let stretch = try ClientRequest(frames: Self.frames("stretch", #"{"song": "3f9a3f9a", "bpm": 170, "max_stretch_pct": 5}"#))
        #expect(stretch.body == .stretch(StretchRequest(song: "3f9a3f9a", bpm: 170, maxStretchPct: 5)))
        let render = try ClientRequest(frames: Self.frames("render", #"{"render": "3f9a3f9a3f9a3f9a-170"}"#))
        #expect(render.body == .render(RenderRequest(render: "3f9a3f9a3f9a3f9a-170")))
        let playlist = try ClientRequest(
            frames: Self.frames("stretch", #"{"playlist": {"profile": "10m@150,5m@170"}, "max_stretch_pct": 6}"#))
        #expect(playlist.body == .stretch(StretchRequest(playlist: PlaylistQuery(profile: "10m@150,5m@170"), maxStretchPct: 6)))
    }

    @Test(arguments: [
        (#"{"song": "3f9a3f9a", "bpm": 500}"#, "stretch", "bpm"),
        (#"{"song": "3f9a3f9a", "bpm": 19.9}"#, "stretch", "bpm"),
        (#"{"song": "3f9a3f9a", "bpm": 170, "max_stretch_pct": 0}"#, "stretch", "max_stretch_pct"),
        (#"{"song": "3f9a3f9a", "bpm": 170, "max_stretch_pct": 80}"#, "stretch", "max_stretch_pct"),
        (#"{"song": "a/b", "bpm": 170}"#, "stretch", "song"),
        (#"{"song": "3f9a3f9a"}"#, "stretch", "bpm"),
        (#"{"bpm": 170}"#, "stretch", "song"),
        (#"{}"#, "stretch", "song"),
        (#"{"song": "3f9a3f9a", "bpm": 170, "playlist": {"cadence": 170}}"#, "stretch", "playlist"),
        (#"{"playlist": {"cadence": 170, "tolerance": 0.04}}"#, "stretch", "playlist.tolerance"),
        (#"{"playlist": {"cadence": 150, "minutes": 60}, "max_stretch_pct": 50}"#, "stretch", "max_stretch_pct"),
        (#"{"playlist": {"cadence": 170, "profile": "10m@170"}}"#, "stretch", "cadence"),
        (#"{"playlist": {"profile": "10m@170", "detector": "a b"}}"#, "stretch", "detector"),
        (#"{"render": "../../etc/passwd"}"#, "render", "render"),
        (#"{"render": ""}"#, "render", "render"),
    ])
    func invalidValuesAreRejectedNamingTheField(body: String, command: String, field: String) {
        do {
            _ = try ClientRequest(frames: Self.frames(command, body))
            Issue.record("accepted \(body)")
        } catch {
            #expect(error.error.body.code == .badRequest)
            #expect(error.description.contains(field), "\(error.description)")
        }
    }

    @Test func neitherRequestTakesABinaryFrame() {
        #expect(throws: RequestRejection.self) {
            try ClientRequest(frames: Self.frames("stretch", #"{"song": "3f9a3f9a", "bpm": 170}"#, [[1]]))
        }
        #expect(throws: RequestRejection.self) { try ClientRequest(frames: Self.frames("render", #"{"render": "a-170"}"#, [[1]])) }
    }

    /// The file travels exactly when the render is done.
    @Test func theFileFollowsTheBodyExactlyWhenTheRenderIsDone() throws {
        let done = try #require(String(data: try JSONEncoder().encode(Examples.renderDone), encoding: .utf8))
        let pending = try #require(String(data: try JSONEncoder().encode(Examples.renderStatus), encoding: .utf8))
        let reply = try ClientReply(frames: Self.replyFrames(done, [Examples.audio]))
        #expect(reply.outcome == .ok(.render(Examples.renderDone, wav: Examples.audio)))
        #expect(throws: ProtocolError.self) { try ClientReply(frames: Self.replyFrames(done)) }
        #expect(throws: ProtocolError.self) { try ClientReply(frames: Self.replyFrames(pending, [Examples.audio])) }
        #expect(throws: ProtocolError.self) {
            try ClientReply(frames: Self.replyFrames(done, [Examples.audio]), limits: .init(maxAudioBytes: 8))
        }
        #expect(throws: ProtocolError.self) {
            try ClientReply(requestID: [], .render(Examples.renderStatus, wav: Examples.audio)).frames()
        }
        // A failed render says why; a pending one has no error.
        var failed = Examples.renderStatus
        failed.state = .failed
        let unexplained = try #require(String(data: try JSONEncoder().encode(failed), encoding: .utf8))
        #expect(throws: ProtocolError.self) { try ClientReply(frames: Self.replyFrames(unexplained)) }
    }

    /// A playlist's render carries its songs and none of a song's fields.
    @Test func aPlaylistsRenderHasSongsAndNoSong() throws {
        let status = Examples.playlistRender
        #expect(status.render.hasPrefix("playlist-") && status.render.count == 25)
        let body = try #require(String(data: try JSONEncoder().encode(status), encoding: .utf8))
        #expect(try ClientReply(frames: Self.replyFrames(body)).outcome == .ok(.render(status, wav: nil)))
        var mixed = status
        mixed.song = Examples.song
        let both = try #require(String(data: try JSONEncoder().encode(mixed), encoding: .utf8))
        #expect(throws: ProtocolError.self) { try ClientReply(frames: Self.replyFrames(both)) }
        var empty = status
        empty.songs = []
        let none = try #require(String(data: try JSONEncoder().encode(empty), encoding: .utf8))
        #expect(throws: ProtocolError.self) { try ClientReply(frames: Self.replyFrames(none)) }
        // The id names the songs and their tempi.
        var other = status.songs ?? []
        other[0].targetBPM += 1
        #expect(RenderStatus.id(playlist: other) != status.render)
    }

    @Test(arguments: [(170.0, "-170"), (128.5, "-128.5"), (99.125, "-99.125"), (100.0004, "-100"), (60.25, "-60.25")])
    func aRendersIdIsTheSongAndTheTempo(bpm: Double, suffix: String) {
        #expect(RenderStatus.id(song: Examples.song, bpm: bpm) == String(Examples.song.hex.prefix(16)) + suffix)
    }

    @Test func noTempoAndTooFarAreErrorCodesOfThisVersion() {
        #expect(ErrorCode.all.contains(.noTempo) && ErrorCode.noTempo.rawValue == "no-tempo")
        #expect(ErrorCode.all.contains(.tooFar) && ErrorCode.tooFar.rawValue == "too-far")
    }
}
