import Foundation
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import TactusZMQ

/// A test's stand-in for the coordinator's backend: a real ROUTER socket on a loopback port,
/// speaking the real protocol through TactusProtocol. It plays the coordinator's part so that
/// a real worker process can be driven message by message.
final class FakeCoordinator {
    let context: ZMQContext
    private(set) var socket: ZMQSocket
    /// `tcp://127.0.0.1:PORT`.
    let endpoint: String

    /// Binds a free port, or `endpoint` when given (to come back on the same port).
    init(endpoint: String? = nil) throws {
        context = try ZMQContext(socketLinger: .zero)
        socket = try context.socket(.router)
        try socket.set(.routerMandatory(true))
        try socket.bind(endpoint ?? "tcp://127.0.0.1:*")
        self.endpoint = try socket.lastEndpoint
    }

    /// Workers that sent READY, which get a HEARTBEAT every ``heartbeatInterval`` while the
    /// test waits for messages, as a coordinator does.
    private var workers: [[UInt8]] = []
    let heartbeatInterval: Duration = .milliseconds(50)
    private var lastHeartbeat = ContinuousClock.now

    /// The next message from a worker, with its routing id; nil when none came in time.
    func receive(timeout: Duration = .seconds(10)) throws -> (worker: [UInt8], message: WorkerMessage, at: ContinuousClock.Instant)? {
        let deadline = ContinuousClock.now + timeout
        while true {
            heartbeat()
            let now = ContinuousClock.now
            guard now < deadline else { return nil }
            guard let frames = try socket.receive(timeout: min(deadline - now, heartbeatInterval)) else { continue }
            let at = ContinuousClock.now
            let message = try WorkerMessage(frames: Array(frames.dropFirst()))
            switch message {
            case .ready, .offer: workers.append(frames[0])
            case .disconnect: workers.removeAll { $0 == frames[0] }
            default: break
            }
            return (frames[0], message, at)
        }
    }

    /// Sends HEARTBEAT to every worker when an interval has passed; forgets workers that are gone.
    private func heartbeat() {
        guard ContinuousClock.now - lastHeartbeat >= heartbeatInterval else { return }
        lastHeartbeat = ContinuousClock.now
        let frames = (try? CoordinatorMessage.heartbeat.frames()) ?? []
        workers.removeAll { worker in (try? socket.trySend([worker] + frames)) != true }
    }

    /// The next message that is not a HEARTBEAT.
    func receiveSkippingHeartbeats(timeout: Duration = .seconds(20)) throws -> (worker: [UInt8], message: WorkerMessage)? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let received = try receive(timeout: deadline - ContinuousClock.now) else { return nil }
            if received.message != .heartbeat { return (received.worker, received.message) }
        }
        return nil
    }

    /// The READY that opens a worker's connection.
    func awaitReady(timeout: Duration = .seconds(20)) throws -> (worker: [UInt8], body: ReadyBody)? {
        guard let received = try receiveSkippingHeartbeats(timeout: timeout), case .ready(let body) = received.message else {
            return nil
        }
        return (received.worker, body)
    }

    func send(_ message: CoordinatorMessage, to worker: [UInt8]) throws {
        try socket.send([worker] + message.frames())
    }

    /// Sends a JOB and returns the RESULT that answers it (heartbeats skipped).
    func run(_ job: JobBody, audio: [UInt8], on worker: [UInt8], timeout: Duration = .seconds(30)) throws -> (body: ResultBody, envelope: [Float]?)? {
        try send(.job(job, audio: audio), to: worker)
        guard let received = try receiveSkippingHeartbeats(timeout: timeout),
            case .result(let body, let envelope) = received.message
        else { return nil }
        return (body, envelope)
    }

    /// Goes away: the socket is closed and the port freed.
    func close() {
        socket.close()
    }
}

/// A `tactus worker` process (the binary `swift build` made), its log kept in a file.
final class WorkerProcess {
    let process = Process()
    let logFile: String
    private let directory: TemporaryDirectory

    init(connect endpoint: String, detector: String = "comb-filter", arguments: [String] = []) throws {
        directory = try TemporaryDirectory(prefix: "tactus-worker-test")
        logFile = directory.file("worker.log")
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["worker", "--connect", endpoint, "--detector", detector, "--log-level", "debug"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logFile)
        try process.run()
    }

    /// A program other than `tactus` (the Python example worker), logging to the same file.
    init(executable: String, arguments: [String]) throws {
        directory = try TemporaryDirectory(prefix: "tactus-worker-test")
        logFile = directory.file("worker.log")
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logFile)
        try process.run()
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// The exit status, or nil when the process is still running after `timeout`.
    func waitForExit(timeout: Duration = .seconds(10)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return process.isRunning ? nil : process.terminationStatus
    }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// How many times the log says `text`.
    func mentions(_ text: String) -> Int { log.components(separatedBy: text).count - 1 }

    /// Waits until the log says `text` more than `earlier` times (``mentions(_:)`` before what
    /// should make the worker say it again).
    func awaitLog(_ text: String, moreThan earlier: Int = 0, timeout: Duration = .seconds(20)) throws {
        try Wait.until("the worker's log to say \"\(text)\" (it says:\n\(log))", timeout: timeout) { mentions(text) > earlier }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A job for `song`, with the defaults of the tests.
func job(_ id: Int64, attempt: Int = 1, params: ParameterSet = ParameterSet(), envelope: Bool = false) -> JobBody {
    JobBody(job: id, attempt: attempt, song: testSong(id), name: "song-\(id).wav", params: params, timeLimitS: 60, envelope: envelope)
}

/// The id a test's JOB gives song `id` (a worker sent the song's bytes does not hash them again).
func testSong(_ id: Int64) -> SongID {
    SongID(hashing: Array("test song \(id)".utf8))
}

/// A long 120 BPM song, cheap to make: a 10 s drum pattern (20 beats) repeated, as a mono
/// 8 kHz 16-bit WAV file. Its analysis takes long enough to watch the worker meanwhile.
func longDrumWAV(minutes: Int) throws -> [UInt8] {
    let tile = Synth.drumPattern(bpm: 120, seconds: 10, sampleRate: 8_000)
    var signal: [Float] = []
    signal.reserveCapacity(tile.count * minutes * 6)
    for _ in 0..<minutes * 6 { signal.append(contentsOf: tile) }
    return try AudioFileWriter(.wav16).encode([signal], sampleRate: 8_000)
}

/// A synthesised drum pattern encoded as a 16-bit WAV file (stereo: both channels the same).
func drumWAV(bpm: Double, seconds: Double, sampleRate: Int = 22_050, channels: Int = 2) throws -> [UInt8] {
    let signal = Synth.drumPattern(bpm: bpm, seconds: seconds, sampleRate: Double(sampleRate))
    return try AudioFileWriter(.wav16).encode(Array(repeating: signal, count: channels), sampleRate: sampleRate)
}

