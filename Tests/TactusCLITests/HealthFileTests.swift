import Foundation
import TactusTestSupport
import TactusWorker
import Testing

/// `tactus worker --health-file` and `tactus health`: a real worker against a fake
/// coordinator that heartbeats it or falls silent, and the real `tactus health` reading the file.
@Suite struct HealthFileTests {
    @Test func theHealthFileFollowsTheCoordinatorAndGoesAwayWithTheWorker() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-health-test")
        let path = directory.file("health")
        // A fresh file left by an earlier run must not make the new worker look healthy.
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let coordinator = try FakeCoordinator()
        let worker = try WorkerProcess(
            connect: coordinator.endpoint, arguments: WorkerProcessTests.fastHeartbeats + ["--health-file", path])
        _ = try #require(try coordinator.awaitReady(), "no READY; worker log:\n\(worker.log)")

        // READY sent, nothing heard yet: no file (the old one removed), unhealthy.
        #expect(!FileManager.default.fileExists(atPath: path))
        let before = try health(path, maxAge: 10)
        #expect(before.status == 1)
        #expect(before.report?["healthy"] as? Bool == false)
        #expect(before.report?["age_s"] is NSNull)

        // Heartbeats flowing (every 50 ms from the fake coordinator): healthy and fresh.
        try keepHeartbeating(coordinator, for: .milliseconds(600))
        let connected = try health(path, maxAge: 2)
        #expect(connected.status == 0)
        #expect(connected.report?["healthy"] as? Bool == true)
        let age = try #require(connected.report?["age_s"] as? Double)
        #expect(age >= 0 && age < 2)

        // The coordinator falls silent: the file ages past a 1 s limit, not past a 30 s one.
        Thread.sleep(forTimeInterval: 1.5)
        let silent = try health(path, maxAge: 1)
        #expect(silent.status == 1)
        #expect((silent.report?["age_s"] as? Double ?? 0) > 1)
        #expect(try health(path, maxAge: 30).status == 0)

        // The worker reconnects (READY again) and hears heartbeats: healthy again.
        _ = try #require(try coordinator.awaitReady(), "no READY after the silence; worker log:\n\(worker.log)")
        try keepHeartbeating(coordinator, for: .milliseconds(600))
        #expect(try health(path, maxAge: 1).status == 0)

        // A stopped worker is unhealthy: the file is gone.
        worker.signal(SIGTERM)
        #expect(worker.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try health(path, maxAge: 30).status == 1)
    }

    @Test func aHealthFileInAMissingDirectoryIsAUsageError() throws {
        let result = try runTactus(["worker", "--detector", "comb-filter", "--health-file", "/nonexistent-tactus-dir/health"])
        #expect(result.status == 2)
        #expect(result.errors.contains("--health-file"))
    }

    /// Lets `duration` pass while the fake coordinator receives (and so heartbeats).
    private func keepHeartbeating(_ coordinator: FakeCoordinator, for duration: Duration) throws {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            _ = try coordinator.receive(timeout: end - ContinuousClock.now)
        }
    }

    /// `tactus health --file PATH --max-age S --json`: its exit status and its JSON object.
    private func health(_ path: String, maxAge: Double) throws -> (status: Int32, report: [String: Any]?) {
        let result = try runTactus(["health", "--file", path, "--max-age", String(maxAge), "--json"])
        let report = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        return (result.status, report)
    }

    private func runTactus(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
    }
}
