import Foundation
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import Testing

/// Names sent by clients and workers reach the library as they were sent, but never drive the
/// terminal of whoever looks at them: every control character is shown escaped, and no name
/// breaks a line.
@Suite struct ControlCharacterTests {
    /// A window title, a clear screen, a colour and a forged line.
    static let hostile = "evil\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[31m\ncritical: fake\u{9B}1m\u{202E}"

    private func expectNoControlCharacters(_ text: String, _ command: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let controls = text.unicodeScalars.filter {
            $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}")
        }
        #expect(controls.isEmpty, "\(command) printed control characters: \(controls.map { String($0.value, radix: 16) })",
                sourceLocation: sourceLocation)
        #expect(!text.contains("\ncritical: fake"), "\(command) let a name forge a line", sourceLocation: sourceLocation)
        #expect(text.contains("\\x1B]0;owned\\x07"), "\(command) does not show the name escaped", sourceLocation: sourceLocation)
    }

    /// `probe` and `analyze` with `--json` of a file whose name holds controls JSON lets through
    /// raw (C1, a bidirectional override): valid JSON carrying the name exactly, no raw control.
    @Test func jsonLinesOfProbeAndAnalyzeAreJSONWhateverTheName() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("song\u{9B}1m\u{202E}.wav")
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(bpm: 120, seconds: 12, sampleRate: 22_050, seed: 5)], sampleRate: 22_050, to: path)
        for command in ["probe", "analyze"] {
            let run = try CLI.run([command, "--json", path])
            #expect(run.status == 0, "\(command): \(run.standardError)")
            let line = try #require(run.jsonLines.first, "\(command) printed no JSON: \(run.standardOutput)")
            #expect(line["file"] as? String == path, "\(command)")
            #expect(!run.standardOutput.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0 == "\u{202E}" })
        }
    }

    @Test func queryShowsHostileTagsAndFileNamesEscaped() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        var song = Fixture.song(1, title: Self.hostile, artist: Self.hostile)
        song.fileName = Self.hostile
        try library.record(song, analyses: [Fixture.record("alpha", bpm: 120), Fixture.record("beta", bpm: 120)])
        #expect(try library.song(Fixture.songID(1))?.fileName == Self.hostile, "stored as sent")
        let run = try CLI.run(["query", "--db", directory.file("library.sqlite"), "--bpm", "100..140"])
        #expect(run.status == 0, "\(run.standardError)")
        expectNoControlCharacters(run.standardOutput, "query")
        let json = try CLI.run(["query", "--db", directory.file("library.sqlite"), "--bpm", "100..140", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["file"] as? String == Self.hostile, "JSON carries the name exactly")
        #expect(!json.standardOutput.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0 == "\u{202E}" })
    }

    /// `result` and `compare SONG` print a song's name inside text of several lines: the name
    /// stays on its line, escaped, and so do the candidates of a name that several songs share.
    @Test func resultAndCompareShowAHostileSongNameOnItsLine() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        for n in [1, 2] {
            var song = Fixture.song(n, title: Self.hostile, artist: Self.hostile)
            song.fileName = Self.hostile
            try library.record(song, analyses: [Fixture.record("alpha", bpm: 120), Fixture.record("beta", bpm: 121)])
        }
        let database = directory.file("library.sqlite")
        let song = Fixture.songID(1).hex
        let result = try CLI.run(["result", song, "--db", database])
        #expect(result.status == 0, "\(result.standardError)")
        expectNoControlCharacters(result.standardOutput, "result")
        let compare = try CLI.run(["compare", song, "--db", database])
        #expect(compare.status == 0, "\(compare.standardError)")
        expectNoControlCharacters(compare.standardOutput, "compare SONG")
        let ambiguous = try CLI.run(["result", Self.hostile, "--db", database])
        #expect(ambiguous.status == 1, "\(ambiguous.standardError)")
        #expect(ambiguous.standardError.contains("names several songs"), "\(ambiguous.standardError)")
        expectNoControlCharacters(ambiguous.standardError, "result NAME (ambiguous)")
        #expect(ambiguous.standardError.split(separator: "\n").count == 3, "a line, then one per candidate: \(ambiguous.standardError)")
    }

    /// The warning for a song `--m3u8` leaves out names it on one line.
    @Test func m3u8WarningsShowAHostileFileNameOnItsLine() throws {
        let directory = try TemporaryDirectory()
        let library = try Fixture.library(in: directory)
        var song = Fixture.song(1)
        song.fileName = Self.hostile
        try library.record(song, analyses: [Fixture.record("alpha", bpm: 120), Fixture.record("beta", bpm: 120)])
        let run = try CLI.run([
            "query", "--db", directory.file("library.sqlite"), "--bpm", "100..140", "--m3u8", directory.file("list.m3u8"),
        ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("is not in"), "no warning: \(run.standardError)")
        expectNoControlCharacters(run.standardError, "query --m3u8 (its warning)")
    }

    @Test func statusShowsHostileWorkerIdsAndMessagesEscaped() throws {
        let server = try FakeFrontend { request in
            if let status = request.body.request(StatusCommand.self), status.song == nil && status.job == nil {
                let state = ServerStatus(
                    queue: ["comb-filter": 1], workers: [WorkerInfo(workerId: Self.hostile, detector: "comb-filter", version: "1", job: 7)],
                    jobsPerSecond: 0, uptimeS: 10, accepting: true)
                return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [], server: state)))])
            } else {
                let job = JobInfo(
                    job: 7, song: SongID(hashing: Array(Self.hostile.utf8)), detector: "comb-filter", state: .failed, attempt: 1,
                    error: ErrorBody(code: .corrupt, message: Self.hostile + ".mp3: damaged"))
                return .init(replies: [ClientReply(requestID: request.requestID, .status(StatusResponse(jobs: [job])))])
            }
        }
        defer { server.stop() }
        let state = try CLI.run(["status", "--server", server.frontend])
        #expect(state.status == 0, "\(state.standardError)")
        expectNoControlCharacters(state.standardOutput, "status")
        let job = try CLI.run(["status", "7", "--server", server.frontend])
        expectNoControlCharacters(job.standardOutput, "status JOB")
    }
}
