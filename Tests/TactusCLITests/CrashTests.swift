import Foundation
import GRDB
import TactusTestSupport
import Testing
@testable import TactusStore

/// `kill -9` at any moment leaves the library consistent and loses nothing reported as stored.
@Suite struct CrashTests {
    static let songs = 2000

    @Test func killingAWriterNeverLosesWhatItReported() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("library.sqlite")
        try Library(path: path).record((0..<Self.songs).map { SongAnalyses(song: Fixture.song($0), analyses: []) })

        // Each round imports a CSV giving every song the tempo 100 + round, in one transaction.
        func csv(_ round: Int) throws -> String {
            let file = directory.file("round-\(round).csv")
            let text = "song,bpm\n" + (0..<Self.songs).map { "\(Fixture.songID($0).hex),\(100 + round)\n" }.joined()
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            return file
        }
        // A complete run, to know how long one takes.
        let start = Date()
        let complete = try CLI.run(["truth", "--db", path, "import", try csv(0)])
        #expect(complete.status == 0, "\(complete.standardError)")
        let fullRun = Date().timeIntervalSince(start)

        var reportedRound = 0  // the last round whose writer said it was stored
        var killedSilently = 0
        var reported = 1
        var round = 0
        // How long a writer runs before the kill, as a fraction of a full run: it adapts, so
        // that both outcomes keep happening whatever the machine's load does to the timing.
        var reach = 1.2
        while round < 100 && (killedSilently < 5 || reported < 4) {
            round += 1
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["truth", "--db", path, "import", try csv(round)]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: Double.random(in: 0...(fullRun * reach)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let said = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if said.contains("imported \(Self.songs) reference tempi") {
                reportedRound = round
                reported += 1
                reach *= 0.8
            } else {
                killedSilently += 1
                reach *= 1.25
            }

            // What a restarted program finds.
            let library = try Library(path: path, options: .init(mode: .existing))
            #expect(try library.integrityCheck() == ["ok"])
            let (songs, tempi) = try library.pool.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0,
                    try Row.fetchAll(db, sql: "SELECT bpm, count(*) FROM reference_tempi GROUP BY bpm")
                        .map { ($0[0] as Double, $0[1] as Int) }
                )
            }
            #expect(songs == Self.songs)
            // All or nothing: every song has the tempo of one round, the last reported or a later one.
            #expect(tempi.count == 1, "round \(round): \(tempi)")
            if let (bpm, count) = tempi.first {
                #expect(count == Self.songs)
                #expect(Int(bpm) - 100 >= reportedRound && Int(bpm) - 100 <= round, "round \(round): tempo \(bpm)")
            }
        }
        // The loop must have killed writers before they reported, and let others finish.
        #expect(killedSilently >= 5)
        #expect(reported >= 4)
    }
}
