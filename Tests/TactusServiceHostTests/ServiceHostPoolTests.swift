import Foundation
import Logging
import TactusLibraryRoots
import TactusModel
import TactusProtocol
import TactusServiceHost
import TactusStore
import TactusTestSupport
import Testing

/// The service hosts as `tactus serve` runs them: real `tactus service-host` processes behind a
/// real pool, given songs and recordings synthesised here.
@Suite struct ServiceHostPoolTests {
    static func pool(processes: Int = 1, limits: [HostedService: Duration] = [:], memoryMegabytes: Int = 0) -> ServiceHostPool {
        var logger = Logger(label: "test.service-host")
        logger.logLevel = .critical
        return ServiceHostPool(
            configuration: ServiceHostPool.Configuration(
                executable: CLI.binary, arguments: ["service-host", "--max-memory-mb", String(memoryMegabytes)], processes: processes,
                timeLimits: limits, memoryLimitMegabytes: memoryMegabytes > 0 ? memoryMegabytes : nil),
            logger: logger)
    }

    /// A recording long enough that its analysis takes a while (`seconds` of steps at 100 Hz).
    static func longRecording(seconds: Double = 600) -> [UInt8] {
        var synth = StepRecordingSynth(stretches: [.init(seconds: seconds, from: 160)])
        synth.seed = 7
        return Array(synth.render().csv(.physicsToolbox).utf8)
    }

    /// The bytes process `pid` has read with `read` and its kind (`rchar` in Linux's
    /// `/proc/PID/io`): a host reads its calls from its channel that way.
    static func bytesRead(by pid: Int32) -> Int {
        let io = (try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)) ?? ""
        let line = io.split(separator: "\n").first { $0.hasPrefix("rchar:") }
        return line.flatMap { Int($0.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
    }

    @Test func aSongIsProbedFromItsBytesAndThroughItsFile() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-service-host")
        let bytes = try TestSong.clickTrack(bpm: 120, seconds: 6)
        let path = directory.file("song.wav")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let probe = IsolatedProbe(hosts: Self.pool())
        let id = SongID(hashing: bytes)
        let fromBytes = try probe.record(of: bytes, name: "song.wav", id: id)
        let fromFile = try probe.record(ofFileAt: path, size: bytes.count, name: "song.wav", id: id)
        #expect(fromBytes.format == "wav" && fromBytes.sampleRate == 22050 && abs(fromBytes.durationS - 6) < 0.01)
        #expect(fromBytes.id == id && fromBytes.fileName == "song.wav" && fromBytes.byteSize == bytes.count)
        #expect(fromFile.format == fromBytes.format && fromFile.durationS == fromBytes.durationS)
    }

    @Test func aFileBelowARootIsHashedAndProbedThroughItsDescriptor() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-service-host-root")
        let bytes = try TestSong.clickTrack(bpm: 132, seconds: 6)
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("song.wav")))
        let file = try LibraryRoots([directory.path]).open(directory.file("song.wav"))
        let probe = IsolatedProbe(hosts: Self.pool())
        let song = try probe.songID(of: file)
        #expect(song == SongID(hashing: bytes))
        let record = try probe.record(of: file, name: "song.wav", id: song)
        #expect(record.id == song && record.byteSize == bytes.count && record.format == "wav")
    }

    @Test func bytesThatAreNotAudioGetTheProbesOwnError() throws {
        let probe = IsolatedProbe(hosts: Self.pool())
        let text = Array("hello, this is not a song at all".utf8)
        let error = #expect(throws: ErrorBody.self) {
            try probe.record(of: text, name: "notes.txt", id: SongID(hashing: text))
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("notes.txt") == true)
    }

    @Test func aRecordingGetsItsCadenceAndABadOneItsProblem() throws {
        let analyzer = IsolatedRecordingAnalyzer(hosts: Self.pool())
        var synth = StepRecordingSynth(stretches: [.init(seconds: 30, from: 150)])
        synth.seed = 3
        let report = try analyzer.cadence(of: Array(synth.render().csv(.physicsToolbox).utf8), name: "run.csv")
        #expect(report.file == "run.csv")
        #expect(abs((report.cadence ?? 0) - 150) < 3)
        let error = #expect(throws: ErrorBody.self) {
            try analyzer.cadence(of: Array("time,gFx,gFy,gFz,TgF\n0,0,0,1,1\n".utf8), name: "bad.csv")
        }
        #expect(error?.code == .badRecording)
        #expect(error?.message.hasPrefix("bad.csv: too few samples") == true)
    }

    @Test func aHostThatDiesDuringACallFailsThatCallOnlyAndIsReplaced() throws {
        let pool = Self.pool()
        let analyzer = IsolatedRecordingAnalyzer(hosts: pool)
        let recording = Self.longRecording(seconds: 3600)
        // Killed once it has the call in hand: it has read the recording from its channel.
        let killerFailure = Locked<(any Error)?>(nil)
        let killerDone = DispatchSemaphore(value: 0)
        let killer = Thread {
            defer { killerDone.signal() }
            do {
                let host = try Wait.value("a host doing the call", poll: .milliseconds(5)) { pool.busyProcessIDs.first }
                try Wait.until("host \(host) reading the \(recording.count) bytes of the recording", poll: .milliseconds(5)) {
                    Self.bytesRead(by: host) >= recording.count
                }
                kill(host, SIGKILL)
            } catch {
                killerFailure.withLock { $0 = error }
            }
        }
        killer.start()
        let error = #expect(throws: ErrorBody.self) { try analyzer.cadence(of: recording, name: "long.csv") }
        killerDone.wait()
        if let failure = killerFailure.withLock({ $0 }) { Issue.record(failure) }
        #expect(error?.code == .workerLost)
        #expect(error?.message == "cadence of long.csv: its process was killed by signal 9 (SIGKILL); nothing was stored")
        #expect(pool.idleProcessIDs.isEmpty)
        var synth = StepRecordingSynth(stretches: [.init(seconds: 30, from: 170)])
        synth.seed = 4
        let report = try analyzer.cadence(of: Array(synth.render().csv(.plain).utf8), name: "next.csv")
        #expect(abs((report.cadence ?? 0) - 170) < 3)
    }

    @Test func aHostThatEndedWhileIdleIsReplacedWithoutFailingACall() throws {
        let pool = Self.pool()
        let analyzer = IsolatedRecordingAnalyzer(hosts: pool)
        _ = try? analyzer.cadence(of: Array("t,x,y,z\n".utf8), name: "warm-up.csv")
        let host = try #require(pool.idleProcessIDs.first)
        kill(host, SIGKILL)
        try Wait.until("host \(host) to end (a zombie, not yet reaped)") {
            (try? String(contentsOfFile: "/proc/\(host)/stat", encoding: .utf8))?.contains(") Z ") != false
        }
        var synth = StepRecordingSynth(stretches: [.init(seconds: 30, from: 170)])
        synth.seed = 4
        let report = try analyzer.cadence(of: Array(synth.render().csv(.plain).utf8), name: "next.csv")
        #expect(abs((report.cadence ?? 0) - 170) < 3)
        #expect(!pool.idleProcessIDs.contains(host))
    }

    @Test func aCallPastItsTimeLimitIsStoppedAndTheNextCallWorks() throws {
        let pool = Self.pool(limits: [.cadence: .milliseconds(200)])
        let analyzer = IsolatedRecordingAnalyzer(hosts: pool)
        // Synthesised before the clock starts: the call is timed, not the test's synthesis.
        let recording = Self.longRecording()
        let started = ContinuousClock.now
        let error = #expect(throws: ErrorBody.self) { try analyzer.cadence(of: recording, name: "long.csv") }
        #expect(error?.code == .timeout)
        #expect(error?.message == "cadence of long.csv: stopped after 0.2 s, the server's time limit for cadence")
        #expect(ContinuousClock.now - started < .seconds(5))
        let again = #expect(throws: ErrorBody.self) {
            try analyzer.cadence(of: Array("t,x,y,z\n0,0,0,1\n".utf8), name: "short.csv")
        }
        #expect(again?.code == .badRecording)
    }

    @Test func aPrestartedHostTakesTheFirstCall() throws {
        let pool = Self.pool()
        pool.prestart(3)
        let started = pool.idleProcessIDs
        #expect(started.count == 1)
        #expect(throws: ErrorBody.self) { try IsolatedRecordingAnalyzer(hosts: pool).cadence(of: Array("t,x,y,z\n".utf8), name: "a.csv") }
        #expect(pool.idleProcessIDs == started)
    }

    @Test func aStoppedPoolRefusesCalls() throws {
        let pool = Self.pool()
        pool.stop()
        let error = #expect(throws: ErrorBody.self) {
            try IsolatedRecordingAnalyzer(hosts: pool).cadence(of: Array("t,x,y,z\n".utf8), name: "late.csv")
        }
        #expect(error?.code == .unavailable)
    }
}
