import Foundation
import TactusAnalysis
import TactusAudio
import TactusCoordinator
import TactusProtocol
import TactusStore
import TactusTestSupport
import TactusZMQ
import Testing

/// The long fault tests of `make soak` (minutes, not seconds): only with `TACTUS_SOAK=1`.
/// `TACTUS_SOAK_SONGS` sets the batch size (default 300 and 100).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_SOAK"] == "1", "set TACTUS_SOAK=1 (make soak)"))
struct SoakTests {
    private static let detectorCount = BuiltinDetectors.registry.names.count

    private static func songCount(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["TACTUS_SOAK_SONGS"].flatMap(Int.init) ?? value
    }

    /// Distinct short songs: 8 s click tracks at tempi spread over 80..180 BPM.
    private func songs(_ count: Int) throws -> [[UInt8]] {
        try (0..<count).map { index in
            let bpm = 80 + Double(index % 100) + Double(index / 100) * 0.25
            return try AudioFileWriter(.wav16).encode([Synth.clickTrack(bpm: bpm, seconds: 8, sampleRate: 22050)], sampleRate: 22050)
        }
    }

    private func log(_ text: String) {
        print("soak: \(text)")
        fflush(nil)
    }

    /// Every song has exactly one job and one analysis per detector, every job done; the file is sound.
    private func checkLibrary(_ path: String, songs: Set<String>) throws -> (jobs: Int, attempts: Int) {
        let library = try Library(path: path, options: .init(mode: .readOnly))
        #expect(try library.integrityCheck() == ["ok"])
        var jobs = 0
        var attempts = 0
        for song in songs {
            let id = try #require(SongID(song))
            let songJobs = try library.jobs(of: id)
            #expect(songJobs.count == Self.detectorCount, "\(song): \(songJobs.count) jobs")
            #expect(Set(songJobs.map(\.detector)).count == Self.detectorCount, "one job per detector")
            #expect(songJobs.allSatisfy { $0.state == .done }, "\(song): \(songJobs.map(\.state))")
            #expect(try library.analyses(of: id).count == Self.detectorCount, "one analysis per detector")
            jobs += songJobs.count
            attempts += songJobs.map(\.attempts).reduce(0, +)
        }
        return (jobs, attempts)
    }

    @Test func killingRandomWorkersLosesNoSong() throws {
        let count = Self.songCount(default: 300)
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(dataDirectory: directory.path, workersPerDetector: 2)
        let client = try ServerClient(server.endpoints)
        let started = ContinuousClock.now
        var submitted = Set<String>()
        for bytes in try songs(count) {
            guard case .ok(.submit(let response)) = try client.submit(bytes, name: "soak.wav") else {
                Issue.record("a submission was refused")
                continue
            }
            submitted.insert(response.song)
        }
        log("\(submitted.count) songs submitted in \(ContinuousClock.now - started)")

        // A killer thread: every 2 to 4 s, kill -9 one of the server's workers at random.
        let stop = DispatchSemaphore(value: 0)
        let serverProcess = server.process.processIdentifier
        nonisolated(unsafe) var kills = 0
        let killer = Thread {
            var generator = SeededGenerator(seed: 42)
            while stop.wait(timeout: .now() + .milliseconds(Int.random(in: 2000...4000, using: &generator))) == .timedOut {
                if let victim = ServerProcess.children(of: serverProcess).randomElement(using: &generator) {
                    kill(victim, SIGKILL)
                    kills += 1
                }
            }
        }
        killer.start()
        let finished = try client.waitForSongs(submitted, timeout: .seconds(3600))
        stop.signal()
        let elapsed = ContinuousClock.now - started
        #expect(finished == submitted, "\(submitted.count - finished.count) songs never finished")
        #expect(server.stop() == 0)
        let (jobs, attempts) = try checkLibrary(directory.path + "/library.sqlite", songs: submitted)
        log("workers killed: \(kills); songs: \(finished.count)/\(submitted.count); jobs: \(jobs), attempts: \(attempts) (\(attempts - jobs) retried); \(elapsed)")
    }

    @Test func killingTheCoordinatorDuringABatchLosesAndDuplicatesNothing() throws {
        let count = Self.songCount(default: 100)
        let directory = try TemporaryDirectory()
        var server = try ServerProcess(dataDirectory: directory.path, workersPerDetector: 1)
        let endpoints = server.endpoints
        let fixed = ["--frontend", endpoints.frontend, "--backend", endpoints.backend, "--events", endpoints.events]
        let context = try ZMQContext(socketLinger: .zero)
        let socket = try context.socket(.dealer)
        try socket.connect(endpoints.frontend)
        var generator = SeededGenerator(seed: 7)
        var nextKill = ContinuousClock.now + .milliseconds(Int.random(in: 500...3000, using: &generator))
        var restarts = 0
        var resent = 0

        /// Kills the coordinator and its workers (the machine "crashes") and starts it again.
        func crashAndRestart() throws {
            let workers = server.workerProcessIDs
            server.stop(signal: SIGKILL)
            for worker in workers { kill(worker, SIGKILL) }
            server = try ServerProcess(dataDirectory: directory.path, workersPerDetector: 1, extraArguments: fixed)
            restarts += 1
            nextKill = ContinuousClock.now + .milliseconds(Int.random(in: 500...3000, using: &generator))
        }

        var accepted = Set<String>()
        var counter = 0
        for bytes in try songs(count) {
            var answer: SubmitResponse?
            while answer == nil {
                if ContinuousClock.now >= nextKill { try crashAndRestart() }
                counter += 1
                let id = Array("soak-\(counter)".utf8)
                try socket.send(try ClientRequest(requestID: id, .submit(SubmitRequest(name: "soak.wav"), audio: bytes)).frames(delimited: true))
                let deadline = ContinuousClock.now + .seconds(5)
                while answer == nil, ContinuousClock.now < deadline, let frames = try socket.receive(timeout: .milliseconds(200)) {
                    guard let reply = try? ClientReply(frames: frames), reply.requestID == id else { continue }
                    if case .ok(.submit(let response)) = reply.outcome { answer = response }
                }
                if answer == nil { resent += 1 }
            }
            accepted.insert(answer!.song)
        }
        log("\(accepted.count) songs accepted; coordinator killed and restarted \(restarts) times during the batch; \(resent) submissions resent")
        // Keep crashing it while the queue drains, then let it finish.
        for _ in 0..<3 {
            Thread.sleep(forTimeInterval: Double.random(in: 1...4, using: &generator))
            try crashAndRestart()
        }
        let client = try ServerClient(server.endpoints)
        let finished = try client.waitForSongs(accepted, timeout: .seconds(1800))
        #expect(finished == accepted, "\(accepted.count - finished.count) accepted songs never finished")
        #expect(server.stop() == 0)
        let (jobs, attempts) = try checkLibrary(directory.path + "/library.sqlite", songs: accepted)
        log("restarts: \(restarts); songs: \(finished.count)/\(accepted.count); jobs: \(jobs), attempts: \(attempts)")
    }
}
