import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import Testing

/// `tactus serve` with its real worker processes, driven over the real protocol.
@Suite(.serialized) struct ServerEndToEndTests {
    private static let detectorCount = BuiltinDetectors.registry.defaultNames.count

    @Test func songsInSeveralFormatsAreAnalysedStoredAndQueryable() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path)
        let client = try ServerClient(server.endpoints)
        let tempi: [(AudioFileWriter.Format, Double)] = [(.wav16, 120), (.flac, 100), (.oggVorbis, 140), (.mp3(.constant), 90)]
        var songs = [SongID: Double]()
        for (format, bpm) in tempi {
            let bytes = try TestSong.drumPattern(bpm: bpm, seconds: 12, format: format)
            let response = try submitted(try client.submit(bytes, name: "\(bpm).\(format)"))
            #expect(response.jobs.count == Self.detectorCount)
            songs[response.song] = bpm
        }
        var noise = SeededGenerator(seed: 11)
        guard case .error(let broken) = try client.submit((0..<50_000).map { _ in UInt8(truncatingIfNeeded: noise.next()) }, name: "noise.mp3") else {
            Issue.record("random bytes were accepted")
            return
        }
        #expect(broken.code == .unsupportedFormat)
        #expect(broken.message.contains("noise.mp3"))

        let finished = try client.waitForSongs(Set(songs.keys), timeout: .seconds(180))
        #expect(finished.count == songs.count)
        for (id, bpm) in songs {
            guard let result = try client.request(.result(ResultRequest(song: id))).answer(ResultCommand.self)?.body else {
                Issue.record("no result for \(id)")
                continue
            }
            #expect(Set(result.analyses.map(\.detector)).count == Self.detectorCount)
            #expect(TempoRelation.acc2(result.consensus.bpm, bpm), "consensus \(String(describing: result.consensus.bpm)) for \(bpm)")
        }
        guard let list = try client.request(.query(QueryRequest(minBpm: 60, maxBpm: 200, octave: true))).answer(QueryCommand.self) else {
            Issue.record("query failed")
            return
        }
        #expect(Set(list.songs.map(\.song)) == Set(songs.keys))
        #expect(server.stop() == 0)
    }

    @Test func aWorkerKilledDuringAJobDoesNotLoseIt() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path, workersPerDetector: 2)
        let client = try ServerClient(server.endpoints)
        let response = try submitted(try client.submit(try TestSong.drumPattern(bpm: 128, seconds: 240, format: .wav16), name: "long.wav"))
        // Find a worker busy with one of the song's jobs and kill it.
        var victim: (pid: Int32, job: Int64)?
        let deadline = ContinuousClock.now + .seconds(30)
        while victim == nil && ContinuousClock.now < deadline {
            guard let status = try client.request(.status(StatusRequest())).answer(StatusCommand.self), let server = status.server else { continue }
            if let busy = server.workers.first(where: { $0.job != nil }), let pid = Int32(busy.workerId.split(separator: ":").last ?? "") {
                victim = (pid, busy.job!)
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        let killed = try #require(victim, "no worker was seen running a job")
        kill(killed.pid, SIGKILL)
        let finished = try client.waitForSongs([response.song], timeout: .seconds(180))
        #expect(finished == [response.song])
        let jobs = try client.jobs(of: response.song)
        #expect(jobs.allSatisfy { $0.state == .done })
        let retried = try #require(jobs.first { $0.job == killed.job })
        #expect(retried.attempt >= 2)
        #expect(server.stop() == 0)
    }

    @Test func killingTheCoordinatorLosesAndDuplicatesNothing() throws {
        let directory = try TemporaryDirectory()
        var songs = Set<SongID>()
        do {
            let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
            let client = try ServerClient(server.endpoints)
            for bpm in [96.0, 112, 124, 150] {
                let bytes = try TestSong.drumPattern(bpm: bpm, seconds: 12, format: .flac)
                songs.insert(try submitted(try client.submit(bytes, name: "\(bpm).flac")).song)
            }
            server.stop(signal: SIGKILL)
        }
        let server = try ServeProcess(dataDirectory: directory.path)
        let client = try ServerClient(server.endpoints)
        let finished = try client.waitForSongs(songs, timeout: .seconds(180))
        #expect(finished == songs)
        #expect(server.stop() == 0)
        let library = try Library(path: directory.path + "/library.sqlite", options: .init(mode: .readOnly))
        #expect(try library.integrityCheck() == ["ok"])
        for id in songs {
            #expect(try library.analyses(of: id).count == Self.detectorCount)
            let jobs = try library.jobs(of: id)
            #expect(jobs.count == Self.detectorCount)
            #expect(jobs.allSatisfy { $0.state == .done })
        }
    }
}
