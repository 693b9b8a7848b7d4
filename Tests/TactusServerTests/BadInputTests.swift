import Foundation
import TactusAudio
import TactusModel
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// The rows of `protocol/BAD-INPUT.md`, sent to a real `tactus serve`: each malformed request
/// and each bad song gets the answer the table says, and the server answers the next request.
@Suite(.serialized) struct BadInputTests {
    private func raw(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Sends `frames` (after the empty delimiter) and returns the error code of the reply, or
    /// nil when none came within two seconds.
    private func answer(_ socket: ZMQSocket, _ frames: [[UInt8]]) throws -> ErrorCode? {
        try socket.send([[]] + frames)
        guard let reply = try socket.receive(timeout: .seconds(2)) else { return nil }
        guard case .error(let body) = try ClientReply(frames: reply).outcome else { return .init(rawValue: "ok") }
        return body.code
    }

    @Test func malformedRequestsGetTheDocumentedErrors() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
        let context = try ZMQContext(socketLinger: .zero)
        let socket = try context.socket(.dealer)
        try socket.connect(server.endpoints.frontend)
        let header = [raw("TACTUS1"), raw("status"), raw("r1")]
        let song = try TestSong.clickTrack(bpm: 120, seconds: 6)
        let rows: [(String, [[UInt8]], ErrorCode?)] = [
            ("an empty message (the delimiter only)", [], .badRequest),
            ("the identifier frame only", [raw("TACTUS1")], .badRequest),
            ("not a Tactus identifier", [raw("HELLO"), raw("status"), raw("r1"), raw("{}")], .badRequest),
            ("an unknown version", [raw("TACTUS3"), raw("status"), raw("r1"), raw("{}")], .unsupportedVersion),
            ("an unknown command", [raw("TACTUS1"), raw("explode"), raw("r1"), raw("{}")], .unknownCommand),
            ("a command in the wrong case", [raw("TACTUS1"), raw("STATUS"), raw("r1"), raw("{}")], .unknownCommand),
            ("a body that is not JSON", header + [raw("not json")], .badRequest),
            ("a JSON array body", header + [raw("[]")], .badRequest),
            ("a body that is not UTF-8", header + [[0x7B, 0xFF, 0xFE, 0x7D]], .badRequest),
            ("a field of the wrong type", header + [raw(#"{"job": "x"}"#)], .badRequest),
            ("an integer field holding 4.5", header + [raw(#"{"job": 4.5}"#)], .badRequest),
            ("both job and song", header + [raw(#"{"job": 1, "song": "abc"}"#)], .badRequest),
            ("a binary frame where none belongs", header + [raw("{}"), [1, 2, 3]], .badRequest),
            ("a request id of 65 bytes", [raw("TACTUS1"), raw("status"), [UInt8](repeating: 65, count: 65), raw("{}")], .tooLarge),
            ("17 frames", header + [raw("{}")] + Array(repeating: [], count: 13), .tooLarge),
            ("100 frames", header + [raw("{}")] + Array(repeating: [9], count: 96), .tooLarge),
            // Over the 1 MiB a frame may have: the connection is dropped, unanswered (the socket connects again).
            ("a body of 5 MiB", header + [raw("{\"a\":\"") + [UInt8](repeating: 97, count: 5 << 20) + raw("\"}")], nil),
            ("a submit without its audio frame", [raw("TACTUS1"), raw("submit"), raw("r1"), raw("{}")], .badRequest),
            ("a submit with an empty audio frame", [raw("TACTUS1"), raw("submit"), raw("r1"), raw("{}"), []], .empty),
            ("a query with min_bpm above max_bpm", [raw("TACTUS1"), raw("query"), raw("r1"), raw(#"{"min_bpm": 150, "max_bpm": 120}"#)], .badRequest),
            ("a query with an offset of Int64.max",
             [raw("TACTUS1"), raw("query"), raw("r1"), raw(#"{"min_bpm": 100, "max_bpm": 200, "offset": 9223372036854775807}"#)],
             .badRequest),
            ("a submit with params for a detector not asked for",
             [raw("TACTUS1"), raw("submit"), raw("r1"), raw(#"{"detectors": ["comb-filter"], "params": {"autocorrelation": {}}}"#), song],
             .badRequest),
            ("a result for an unknown song", [raw("TACTUS1"), raw("result"), raw("r1"), raw(#"{"song": "\#(String(repeating: "ab", count: 32))"}"#)], .notFound),
            ("a submit for an unknown detector", [raw("TACTUS1"), raw("submit"), raw("r1"), raw(#"{"detectors": ["nope"]}"#), song], .unknownDetector),
            ("a submit with a parameter out of range", [raw("TACTUS1"), raw("submit"), raw("r1"), raw(#"{"detectors": ["comb-filter"], "params": {"comb-filter": {"min_bpm": 5}}}"#), song], .invalidParameter),
            ("a submit by path without library roots", [raw("TACTUS1"), raw("submit"), raw("r1"), raw(#"{"path": "/etc/passwd"}"#)], .forbidden),
        ]
        for (name, frames, expected) in rows {
            #expect(try answer(socket, frames) == expected, "\(name)")
        }
        // After all of it, a valid request is answered.
        #expect(try answer(socket, header + [raw("{}")]) == ErrorCode(rawValue: "ok"))
        #expect(server.stop() == 0)
    }

    @Test func badSongsAreRefusedAtSubmitOrFailTheirJobs() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path)
        let client = try ServerClient(server.endpoints)
        var noise = SeededGenerator(seed: 17)
        let random = (0..<100_000).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
        let wav = try TestSong.clickTrack(bpm: 120, seconds: 6)
        var hugeWav = wav
        // The RIFF and data sizes claim 4 GB.
        let data = try #require(hugeWav.indices.first { hugeWav[$0..<$0 + 4].elementsEqual("data".utf8) })
        for offset in 0..<4 { hugeWav[data + 4 + offset] = 0xFF; hugeWav[4 + offset] = 0xFF }
        let long = try AudioFileWriter(.wav16).encode([Synth.clickTrack(bpm: 120, seconds: 30, sampleRate: 22050)], sampleRate: 22050)
        let flac = try AudioFileWriter(.flac).encode([Synth.clickTrack(bpm: 120, seconds: 30, sampleRate: 22050)], sampleRate: 22050)
        let mp3 = try AudioFileWriter(.mp3(.constant)).encode([Synth.clickTrack(bpm: 120, seconds: 30, sampleRate: 22050)], sampleRate: 22050)
        let short = try AudioFileWriter(.wav16).encode([Synth.clickTrack(bpm: 120, seconds: 2, sampleRate: 22050)], sampleRate: 22050)
        // Refused at submit, from the header: code expected.
        let refused: [(String, [UInt8], ErrorCode)] = [
            ("two bytes", [0xFF, 0xFB], .unsupportedFormat),
            ("random bytes named .mp3", random, .unsupportedFormat),
            ("a text file", raw(String(repeating: "not audio at all\n", count: 100)), .unsupportedFormat),
        ]
        for (name, bytes, code) in refused {
            guard case .error(let error) = try client.submit(bytes, name: name) else {
                Issue.record("\(name) was accepted")
                continue
            }
            #expect(error.code == code, "\(name): \(error.message)")
        }
        // Accepted (the header is fine) but the analysis fails: the job error code expected.
        let failing: [(String, [UInt8], String)] = [
            ("a WAV claiming 4 GB (6 s of data)", hugeWav, "ok-truncated"),
            ("a WAV cut to a third", Array(long.prefix(long.count / 3)), "ok-truncated"),
            ("a WAV cut to 2 s", Array(long.prefix(44 + 2 * 44100)), "truncated"),
            ("a FLAC cut in half", Array(flac.prefix(flac.count / 2)), "ok-truncated"),
            ("an MP3 cut to 1 s", Array(mp3.prefix(mp3.count / 30)), "too-short"),
            ("a song of 2 s", short, "too-short"),
        ]
        var songs: [SongID: (String, String)] = [:]
        for (name, bytes, expected) in failing {
            let outcome = try client.submit(bytes, name: name)
            if let response = outcome.answer(SubmitCommand.self) {
                songs[response.song] = (name, expected)
            } else if case .error(let error) = outcome {
                Issue.record("\(name) was refused at submit: \(error.code.rawValue): \(error.message)")
            } else {
                Issue.record("\(name): unexpected answer")
            }
        }
        let finished = try client.waitForSongs(Set(songs.keys), timeout: .seconds(180))
        #expect(finished.count == songs.count)
        for (song, (name, expected)) in songs {
            let jobs = try client.jobs(of: song)
            let outcome = Set(jobs.map { $0.state == .done ? "ok" : ($0.error?.code.rawValue ?? $0.state.rawValue) })
            if expected == "ok-truncated" {
                #expect(outcome == ["ok"], "\(name): \(outcome)")
            } else {
                #expect(outcome == [expected], "\(name): \(outcome)")
            }
        }
        #expect(server.stop() == 0)
    }
}
