import Foundation
import Logging
import Synchronization
import TactusLocalWorkers
import Testing

/// The pool that supervises `tactus serve`'s local workers, with real processes (`/bin/sh`)
/// that end the ways a worker can: by a signal or with a status.
@Suite struct LocalWorkerPoolTests {
    /// Runs a pool of one slot running `script` until `count` exits were reported; returns them.
    private func exits(of script: String, count: Int) -> [LocalWorkerPool.Exit] {
        let reported = Mutex<[LocalWorkerPool.Exit]>([])
        let pool = LocalWorkerPool(
            slots: [LocalWorkerPool.Slot(executable: "/bin/sh", arguments: ["-c", script], label: "shell#1")],
            logger: Logger(label: "test")
        ) { exit in reported.withLock { $0.append(exit) } }
        pool.start()
        let deadline = ContinuousClock.now + .seconds(20)
        while reported.withLock({ $0.count }) < count && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        pool.stop(grace: 1)
        return reported.withLock { Array($0.prefix(count)) }
    }

    @Test func aProcessKilledByASignalIsReportedWithTheSignalAndRestarted() throws {
        // The second report comes from the restarted process (after the 0.5 s backoff).
        // SIGKILL: the test runner's children may inherit other signals ignored.
        let reported = exits(of: "kill -KILL $$", count: 2)
        try #require(reported.count == 2, "the process was restarted and reported again")
        #expect(reported.allSatisfy { $0.killedBySignal && $0.status == SIGKILL && $0.label == "shell#1" })
        #expect(reported.map(\.description) == Array(repeating: "was killed by signal 9 (SIGKILL)", count: 2))
        #expect(reported[0].processID != reported[1].processID)
    }

    @Test func aProcessThatExitsIsReportedWithItsStatus() throws {
        let reported = exits(of: "exit 3", count: 1)
        let exit = try #require(reported.first)
        #expect(!exit.killedBySignal)
        #expect(exit.status == 3)
        #expect(exit.description == "exited with status 3")
    }
}
