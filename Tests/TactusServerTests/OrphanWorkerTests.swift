import Foundation
import TactusAnalysis
import TactusDetector
import TactusTestSupport
import Testing

/// Local workers end with the `tactus serve` that started them, however it ends, so none is
/// left to join the next coordinator.
@Suite(.serialized) struct OrphanWorkerTests {
    /// Whether process `pid` still runs (a zombie waiting for its new parent to reap it does not).
    private func running(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return false
        }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    @Test func localWorkersEndWhenTheirServerIsKilled() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path)
        // One worker (ServeProcess asks for one), offering every built-in detector.
        let expected = 1
        var workers = [Int32]()
        let started = ContinuousClock.now + .seconds(30)
        while workers.count < expected && ContinuousClock.now < started {
            Thread.sleep(forTimeInterval: 0.1)
            workers = server.workerProcessIDs
        }
        #expect(workers.count == expected, "the server started \(workers.count) of \(expected) workers")
        kill(server.processID, SIGKILL)
        server.process.waitUntilExit()
        let deadline = ContinuousClock.now + .seconds(10)
        while workers.contains(where: running) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let strays = workers.filter(running)
        for stray in strays { kill(stray, SIGKILL) }
        #expect(strays.isEmpty, "workers \(strays) outlived their server")
    }

    @Test func aWorkerWhoseServerIsAlreadyGoneDoesNotStart() throws {
        // Process 1 is never the parent of a process this test starts.
        let run = try CLI.run(["worker", "--connect", "tcp://127.0.0.1:1", "--detector", "comb-filter", "--parent-pid", "1"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("pid 1") && run.standardError.contains("has exited"), "\(run.standardError)")
    }
}
