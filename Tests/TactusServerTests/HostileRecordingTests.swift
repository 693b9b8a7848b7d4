import Foundation
import Synchronization
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// Recordings built to break whoever parses them, sent to `tactus serve`: each fails its own
/// request with an error, while the coordinator keeps its process, its memory and its answers to
/// other clients (it parses none of them itself: its service hosts do).
@Suite struct HostileRecordingTests {
    /// A plain recording of `rows` samples at 100 Hz whose last time is `last`.
    static func recording(rows: Int = 3000, last: String) -> [UInt8] {
        var lines = ["t,x,y,z"]
        for index in 0..<(rows - 1) { lines.append("\(Double(index) / 100),0.1,0.2,9.8") }
        lines.append("\(last),0.1,0.2,9.8")
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// A Physics Toolbox recording whose last clock time is `last`.
    static func clockRecording(last: String) -> [UInt8] {
        var lines = ["time,gFx,gFy,gFz,TgF"]
        for index in 0..<2999 {
            let centis = index
            lines.append(String(format: "17:23:%02d.%03d,0.01,0.02,1.0,1.0", 10 + centis / 100, (centis % 100) * 10))
        }
        lines.append("\(last),0.01,0.02,1.0,1.0")
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// One line of `bytes` bytes, no newline: a header that never ends.
    static func endlessHeader(_ bytes: Int) -> [UInt8] {
        var line = Array("time,".utf8)
        line += [UInt8](repeating: UInt8(ascii: "x"), count: bytes - line.count)
        return line
    }

    @Test func hostileRecordingsFailTheirOwnRequestsWhileTheServerGoesOn() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-hostile-cadence")
        let server = try ServeProcess(
            dataDirectory: directory.path, extraArguments: ["--no-local-workers", "--max-cadence-seconds", "5"], captureErrors: true)
        let coordinator = server.processID
        let watch = ServerWatch(server: server)
        watch.start()
        var watching = true
        defer { if watching { _ = watch.stop() } }
        let cases: [(String, [UInt8])] = [
            ("last-time-1e308.csv", Self.recording(last: "1e308")),
            ("clock-time.csv", Self.clockRecording(last: "9999999999999999:00:00.000")),
            ("last-time-400000.csv", Self.recording(last: "400000")),
            ("last-time-1e7.csv", Self.recording(last: "1e7")),
            ("header-60MiB.csv", Self.endlessHeader(60 << 20)),
        ]
        for (name, bytes) in cases {
            guard let outcome = try? Self.send(bytes, name: name, to: server.endpoints) else {
                server.stop()
                Issue.record("\(name): no answer within 60 s; the server said: \(server.errors.suffix(4000))")
                return
            }
            #expect(outcome.seconds < 30, "\(name): answered after \(outcome.seconds) s")
            #expect(["bad-recording", "worker-lost", "timeout"].contains(outcome.code), "\(name): \(outcome)")
            #expect(outcome.message.hasPrefix(name) || outcome.message.hasPrefix("cadence of \(name)"), "\(name): \(outcome)")
        }
        // Two at once.
        let twice = Mutex<[Outcome]>([])
        let endpoints = server.endpoints
        let threads = (0..<2).map { index in
            Thread {
                if let outcome = try? Self.send(Self.endlessHeader(20 << 20), name: "header-20MiB-\(index).csv", to: endpoints) {
                    twice.withLock { $0.append(outcome) }
                }
            }
        }
        threads.forEach { $0.start() }
        while twice.withLock({ $0.count }) < 2 && watch.elapsed < .seconds(240) { Thread.sleep(forTimeInterval: 0.05) }
        for outcome in twice.withLock({ $0 }) {
            #expect(outcome.seconds < 30 && ["bad-recording", "worker-lost", "timeout"].contains(outcome.code), "\(outcome)")
        }
        #expect(twice.withLock { $0.count } == 2)
        let figures = watch.stop()
        watching = false
        #expect(server.process.isRunning && server.processID == coordinator)
        #expect(figures.slowestQuery < .milliseconds(500), "a query took \(figures.slowestQuery)")
        #expect(figures.queries > 20)
        #expect(figures.peakResidentBytes < 300 << 20, "the coordinator reached \(figures.peakResidentBytes >> 20) MiB")
    }

    struct Outcome: CustomStringConvertible {
        var code: String
        var message: String
        var seconds: Double

        var description: String { "\(code) after \(seconds) s: \(message)" }
    }

    /// Sends `bytes` as a cadence request (as an upload when larger than a frame) and says how it
    /// was answered.
    static func send(_ bytes: [UInt8], name: String, to endpoints: ServeProcess.Endpoints) throws -> Outcome {
        let client = try ServerClient(endpoints)
        let started = ContinuousClock.now
        let outcome = try client.cadence(bytes, name: name, timeout: .seconds(60))
        let seconds = (ContinuousClock.now - started).seconds
        switch outcome {
        case .error(let error): return Outcome(code: error.code.rawValue, message: error.message, seconds: seconds)
        case .ok: return Outcome(code: "ok", message: "", seconds: seconds)
        }
    }
}

/// Watches a running server from another client: a query every 100 ms, timed, and the
/// coordinator's resident memory.
final class ServerWatch: @unchecked Sendable {
    struct Figures {
        var queries = 0
        var slowestQuery: Duration = .zero
        var peakResidentBytes = 0
    }

    private let server: ServeProcess
    private let state = Mutex((figures: Figures(), stopping: false))
    private let done = DispatchSemaphore(value: 0)
    private let started = ContinuousClock.now

    init(server: ServeProcess) {
        self.server = server
    }

    var elapsed: Duration { ContinuousClock.now - started }

    func start() {
        let endpoints = server.endpoints
        let pid = server.processID
        Thread { [self] in
            defer { done.signal() }
            guard let client = try? ServerClient(endpoints) else { return }
            while !state.withLock({ $0.stopping }) {
                let began = ContinuousClock.now
                let answered = (try? client.request(.query(QueryRequest(minBpm: 60, maxBpm: 200)), timeout: .seconds(10))) != nil
                let took = ContinuousClock.now - began
                let resident = Self.residentBytes(of: pid)
                state.withLock { state in
                    state.figures.queries += answered ? 1 : 0
                    state.figures.slowestQuery = max(state.figures.slowestQuery, answered ? took : .seconds(10))
                    state.figures.peakResidentBytes = max(state.figures.peakResidentBytes, resident)
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }.start()
    }

    /// Stops watching; the figures, the peak memory taken from the kernel's high-water mark.
    func stop() -> Figures {
        state.withLock { $0.stopping = true }
        done.wait()
        var figures = state.withLock { $0.figures }
        figures.peakResidentBytes = max(figures.peakResidentBytes, Self.status(of: server.processID, "VmHWM"))
        return figures
    }

    static func residentBytes(of pid: Int32) -> Int { status(of: pid, "VmRSS") }

    /// A field of `/proc/PID/status` in bytes (its value is in kB).
    static func status(of pid: Int32, _ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }
}
