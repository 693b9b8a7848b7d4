import Foundation
import TactusAnalysis
import TactusDetector
import TactusAudio
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import TactusZMQ
import Testing

/// The long fault tests of `make soak` (minutes, not seconds): only with `TACTUS_SOAK=1`.
/// `TACTUS_SOAK_SONGS` sets the batch size (default 300 and 100).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_SOAK"] == "1", "set TACTUS_SOAK=1 (make soak)"))
struct SoakTests {
    private static let detectorCount = BuiltinDetectors.registry.defaultNames.count

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
    private func checkLibrary(_ path: String, songs: Set<SongID>) throws -> (jobs: Int, attempts: Int) {
        let library = try Library(path: path, options: .init(mode: .readOnly))
        #expect(try library.integrityCheck() == ["ok"])
        var jobs = 0
        var attempts = 0
        for song in songs {
            let id = song
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
        let server = try ServeProcess(dataDirectory: directory.path, workersPerDetector: 2)
        let client = try ServerClient(server.endpoints)
        let batch = try songs(count)
        // A killer thread: every 2 to 4 s, kill -9 one of the server's workers at random, from
        // the first submission to the last song.
        let stop = DispatchSemaphore(value: 0)
        let serverProcess = server.process.processIdentifier
        nonisolated(unsafe) var kills = 0
        let killer = Thread {
            var generator = SeededGenerator(seed: 42)
            while stop.wait(timeout: .now() + .milliseconds(Int.random(in: 2000...4000, using: &generator))) == .timedOut {
                let workers = ServeProcess.children(of: serverProcess).filter { ServeProcess.subcommand(of: $0) == "worker" }
                if let victim = workers.randomElement(using: &generator) {
                    kill(victim, SIGKILL)
                    kills += 1
                }
            }
        }
        killer.start()
        let started = ContinuousClock.now
        var submitted = Set<SongID>()
        for bytes in batch {
            guard let response = try client.submit(bytes, name: "soak.wav").answer(SubmitCommand.self) else {
                Issue.record("a submission was refused")
                continue
            }
            submitted.insert(response.song)
        }
        log("\(submitted.count) songs submitted in \(ContinuousClock.now - started)")
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
        let batch = try songs(count)
        let crasher = try Crasher(dataDirectory: directory.path)
        let endpoints = crasher.endpoints
        let context = try ZMQContext(socketLinger: .zero)
        let socket = try context.socket(.dealer)
        try socket.connect(endpoints.frontend)
        // A crash every 0.5 to 3 s while the batch is submitted, so some land mid-request.
        let stop = DispatchSemaphore(value: 0)
        let crashes = Thread {
            var generator = SeededGenerator(seed: 7)
            while stop.wait(timeout: .now() + .milliseconds(Int.random(in: 500...3000, using: &generator))) == .timedOut {
                crasher.crashAndRestart()
            }
        }
        crashes.start()
        var accepted = Set<SongID>()
        var counter = 0
        var resent = 0
        for bytes in batch {
            var answer: SubmitResponse?
            while answer == nil {
                counter += 1
                let id = Array("soak-\(counter)".utf8)
                try socket.send(try ClientRequest(requestID: id, .submit(SubmitRequest(name: "soak.wav"), audio: bytes)).frames(delimited: true))
                let deadline = ContinuousClock.now + .seconds(5)
                while answer == nil, ContinuousClock.now < deadline {
                    guard let frames = try socket.receive(timeout: .milliseconds(200)),
                        let reply = try? ClientReply(frames: frames), reply.requestID == id
                    else { continue }
                    if let response = reply.outcome.answer(SubmitCommand.self) { answer = response }
                }
                if answer == nil { resent += 1 }
            }
            accepted.insert(answer!.song)
        }
        log("\(accepted.count) songs accepted with \(crasher.restarts) crashes during the batch; \(resent) submissions resent")
        // Crash it twice more while the queue drains, then let it finish.
        Thread.sleep(forTimeInterval: 3)
        crasher.crashAndRestart()
        Thread.sleep(forTimeInterval: 3)
        stop.signal()
        crasher.crashAndRestart()
        let client = try ServerClient(endpoints)
        let finished = try client.waitForSongs(accepted, timeout: .seconds(1800))
        #expect(finished == accepted, "\(accepted.count - finished.count) accepted songs never finished")
        #expect(crasher.stop() == 0)
        let (jobs, attempts) = try checkLibrary(directory.path + "/library.sqlite", songs: accepted)
        log("crashes: \(crasher.restarts); songs: \(finished.count)/\(accepted.count); jobs: \(jobs), attempts: \(attempts)")
    }
}

/// A `tactus serve` that can be crashed (`kill -9` of it and its workers, as when the machine
/// dies) and restarted on the same endpoints from any thread.
final class Crasher: @unchecked Sendable {
    private let lock = NSLock()
    private let dataDirectory: String
    private var server: ServeProcess
    let endpoints: ServeProcess.Endpoints
    private(set) var restarts = 0

    init(dataDirectory: String) throws {
        self.dataDirectory = dataDirectory
        server = try ServeProcess(dataDirectory: dataDirectory, workersPerDetector: 1)
        endpoints = server.endpoints
    }

    func crashAndRestart() {
        lock.withLock {
            let workers = server.workerProcessIDs
            server.stop(signal: SIGKILL)
            for worker in workers { kill(worker, SIGKILL) }
            let fixed = ["--frontend", endpoints.frontend, "--backend", endpoints.backend, "--events", endpoints.events]
            // The ports were just freed; a restart that cannot bind yet is tried again.
            for _ in 0..<20 {
                if let restarted = try? ServeProcess(dataDirectory: dataDirectory, workersPerDetector: 1, extraArguments: fixed) {
                    server = restarted
                    restarts += 1
                    return
                }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
    }

    func stop() -> Int32 {
        lock.withLock { server.stop() }
    }
}
