import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import TactusZMQ
import Testing

/// Faults done for real against a real `tactus serve`: a hung worker, a worker that sends
/// garbage, a client that vanishes mid-request, a full blob disk, a locked database. Each
/// gets a clear answer, and the server keeps serving afterwards.
@Suite(.serialized) struct FaultToleranceTests {
    private static let detectorCount = BuiltinDetectors.registry.defaultNames.count

    /// Files left in the blob directory that are not complete blobs (temporary `.partial` files).
    private func partialBlobs(_ dataDirectory: String) -> [String] {
        let blobs = dataDirectory + "/blobs"
        let files = FileManager.default.enumerator(atPath: blobs)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".partial") }
    }

    // MARK: A hung worker

    /// A local worker that hangs (SIGSTOP) keeps its job while its process is alive and the job
    /// within its time limit (late heartbeats are not death: issue 13, item 10); at the time
    /// limit the job moves to another worker.
    @Test func aHungWorkersJobMovesToAnotherAtItsTimeLimitAndTheWorkerComesBack() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(
            dataDirectory: directory.path, workersPerDetector: 2, extraArguments: ["--job-time-limit", "20"])
        let client = try ServerClient(server.endpoints)
        let response = try submitted(try client.submit(try TestSong.clickTrack(bpm: 124, seconds: 240), name: "long.wav"))
        var victim: (pid: Int32, job: Int64)?
        let deadline = ContinuousClock.now + .seconds(30)
        while victim == nil && ContinuousClock.now < deadline {
            if let busy = try client.serverStatus().workers.first(where: { $0.job != nil }),
                let pid = Int32(busy.workerId.split(separator: ":").last ?? "")
            {
                victim = (pid, busy.job!)
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        let hung = try #require(victim, "no worker was seen running a job")
        // SIGSTOP: the process stays, its socket stays open, but it sends nothing more.
        kill(hung.pid, SIGSTOP)
        defer { kill(hung.pid, SIGCONT) }
        // Past the 7.5 s liveness, within the time limit: the job is still the hung worker's.
        Thread.sleep(forTimeInterval: 10)
        let held = try #require(try client.jobs(of: response.song).first { $0.job == hung.job })
        #expect(held.state == .running && held.attempt == 1, "\(held)")
        let finished = try client.waitForSongs([response.song], timeout: .seconds(180))
        #expect(finished == [response.song])
        let jobs = try client.jobs(of: response.song)
        #expect(jobs.allSatisfy { $0.state == .done })
        let moved = try #require(jobs.first { $0.job == hung.job })
        #expect(moved.attempt >= 2, "the hung worker's job ran again elsewhere")
        #expect(try client.serverStatus().workers.count < 2, "the hung worker was removed")

        // Resumed, the worker finds the coordinator silent, reconnects and is offered work again.
        kill(hung.pid, SIGCONT)
        #expect(try client.waitForWorkers(2) == 2, "the resumed worker joined again")
        #expect(server.workerProcessIDs.contains(hung.pid), "the same process rejoined; it was not restarted")
        #expect(server.stop() == 0)
    }

    // MARK: A worker that sends garbage

    @Test func aWorkerSendingGarbageIsDisconnectedAndTheServerKeepsServing() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path)
        let client = try ServerClient(server.endpoints)
        let descriptor = DetectorDescriptor(name: "garbage-test", version: "1.0", summary: "a worker played by a test", specific: [])
        let ready = try WorkerMessage.ready(
            ReadyBody(workerId: "garbage:1", detector: DetectorInfo(descriptor), params: try descriptor.resolve())
        ).frames()
        var noise = SeededGenerator(seed: 5)
        let random = (0..<300).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
        // Each case: what the worker sends after connecting, and the error code of the DISCONNECT.
        let cases: [(name: String, messages: [[[UInt8]]], code: ErrorCode)] = [
            ("random bytes", [[random]], .badRequest),
            ("an unknown version", [[Array("TACTUS9".utf8), Array("READY".utf8), Array("{}".utf8)]], .unsupportedVersion),
            ("an unknown command", [[Array("TACTUS1".utf8), Array("EXPLODE".utf8), Array("{}".utf8)]], .unknownCommand),
            ("a body that is not JSON", [[Array("TACTUS1".utf8), Array("READY".utf8), random]], .badRequest),
            ("a RESULT before READY", [[Array("TACTUS1".utf8), Array("RESULT".utf8), Array(#"{"job":1,"attempt":1}"#.utf8)]], .badRequest),
            ("READY then a truncated RESULT", [ready, [Array("TACTUS1".utf8), Array("RESULT".utf8), Array(#"{"job":"#.utf8)]], .badRequest),
            ("READY then an envelope of 5 bytes", [
                ready, [Array("TACTUS1".utf8), Array("RESULT".utf8),
                        Array(#"{"job":1,"attempt":1,"envelope_hop_s":0.02,"error":{"code":"internal","message":"x"}}"#.utf8), [1, 2, 3, 4, 5]],
            ], .badRequest),
            ("READY twice", [ready, ready], .badRequest),
            ("40 frames", [[Array("TACTUS1".utf8), Array("HEARTBEAT".utf8), Array("{}".utf8)] + Array(repeating: [], count: 37)], .tooLarge),
        ]
        let context = try ZMQContext(socketLinger: .zero)
        for testCase in cases {
            let worker = try context.socket(.dealer)
            try worker.connect(server.endpoints.backend)
            for message in testCase.messages { try worker.send(message) }
            var disconnect: DisconnectBody?
            let deadline = ContinuousClock.now + .seconds(10)
            while disconnect == nil && ContinuousClock.now < deadline {
                guard let frames = try worker.receive(timeout: .milliseconds(200)) else { continue }
                if case .disconnect(let body) = try CoordinatorMessage(frames: frames) { disconnect = body }
            }
            let body = try #require(disconnect, "no DISCONNECT after \(testCase.name)")
            #expect(body.error?.code == testCase.code, "\(testCase.name): \(String(describing: body.error))")
            #expect(body.error?.message.isEmpty == false)
            // One protocol error, one DISCONNECT.
            var more = 0
            let quiet = ContinuousClock.now + .milliseconds(700)
            while ContinuousClock.now < quiet {
                guard let frames = try worker.receive(timeout: .milliseconds(100)) else { continue }
                if case .disconnect = try CoordinatorMessage(frames: frames) { more += 1 }
            }
            #expect(more == 0, "\(testCase.name): \(more + 1) DISCONNECT messages")
            worker.close()
        }
        // The garbage worker's detector is not offered; the coordinator still analyses songs.
        #expect(try client.serverStatus().workers.allSatisfy { $0.detector != "garbage-test" })
        let response = try submitted(try client.submit(try TestSong.clickTrack(bpm: 110, seconds: 8), name: "after-garbage.wav"))
        #expect(try client.waitForSongs([response.song], timeout: .seconds(120)) == [response.song])
        #expect(try client.jobs(of: response.song).allSatisfy { $0.state == .done })
        #expect(server.stop() == 0)
    }

    // MARK: A client that disconnects mid-request

    @Test func aClientClosingDuringABigSubmitLeavesAWholeSubmissionOrNone() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
        // About 6.6 MB each, different bytes per attempt: sent and abandoned at once, or after a moment.
        var songs: [SongID: Int] = [:]
        for (index, delay) in [0.0, 0.001, 0.01, 0.05].enumerated() {
            let bytes = try TestSong.clickTrack(bpm: 90 + Double(index), seconds: 150)
            songs[SongID(hashing: bytes)] = bytes.count
            let context = try ZMQContext(socketLinger: .zero)
            let socket = try context.socket(.dealer)
            try socket.connect(server.endpoints.frontend)
            try socket.send(try ClientRequest(requestID: Array("gone".utf8), .submit(SubmitRequest(name: "gone.wav"), audio: bytes)).frames(delimited: true))
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            socket.close()
            context.shutdown()
        }
        // The server answers another client at once, and keeps accepting songs.
        let client = try ServerClient(server.endpoints)
        #expect(try client.serverStatus().accepting)
        let small = try submitted(try client.submit(try TestSong.clickTrack(bpm: 128, seconds: 6), name: "small.wav"))
        #expect(small.jobs.count == Self.detectorCount)
        // A moment for the server to take in what the vanished clients sent before it stops. No
        // event is awaited: the checks below hold whatever it took in by then (a stop finishes
        // the submissions in hand; the others are refused or never read).
        Thread.sleep(forTimeInterval: 1)
        #expect(server.stop() == 0)

        let library = try Library(path: directory.path + "/library.sqlite", options: .init(mode: .readOnly))
        #expect(try library.integrityCheck() == ["ok"])
        #expect(partialBlobs(directory.path).isEmpty)
        for (song, size) in songs {
            let jobs = try library.jobs(of: song)
            let blob = directory.path + "/blobs/" + SongBlobs.relativePath(for: song)
            if jobs.isEmpty {
                #expect(!FileManager.default.fileExists(atPath: blob), "a refused submission left its blob")
            } else {
                #expect(jobs.count == Self.detectorCount && jobs.allSatisfy { $0.state == .queued })
                let stored = try #require(FileManager.default.contents(atPath: blob))
                #expect(stored.count == size && SongID(hashing: [UInt8](stored)) == song, "a stored song is whole")
            }
        }
    }

    // MARK: A full disk for the blobs

    @Test func aFullBlobDiskRefusesCleanlyAndRecoversOnceSpaceIsFreed() throws {
        guard getuid() == 0 else {
            print("skipped: a full disk is simulated with a small tmpfs, which needs root (mount -t tmpfs)")
            return
        }
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }  // removed only after the tmpfs is unmounted
        let blobs = directory.path + "/blobs"
        try FileManager.default.createDirectory(atPath: blobs, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=2m", "tactus-test-blobs", blobs]
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else {
            print("skipped: mount -t tmpfs is not permitted here (status \(mount.terminationStatus)); the full-disk test needs it")
            return
        }
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = ["-l", blobs]
            try? unmount.run()
            unmount.waitUntilExit()
        }
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
        let client = try ServerClient(server.endpoints)
        // 1.5 MB of the 2 MB taken by something else; a 1 MB song does not fit.
        let filler = blobs + "/filler"
        try Data(count: 1_500_000).write(to: URL(fileURLWithPath: filler))
        let bytes = try TestSong.clickTrack(bpm: 100, seconds: 24)
        #expect(bytes.count > 1_000_000)
        let id = SongID(hashing: bytes)
        guard case .error(let full) = try client.submit(bytes, name: "big.wav") else {
            Issue.record("a song was accepted on a full disk")
            return
        }
        #expect(full.code == .unavailable)
        #expect(full.message.contains("No space left on device"), "\(full.message)")
        #expect(full.retryAfterMs != nil)
        #expect(partialBlobs(directory.path).isEmpty, "nothing half-stored")
        guard case .error(let unknown) = try client.request(.status(StatusRequest(song: id))) else {
            Issue.record("the refused song is in the library")
            return
        }
        #expect(unknown.code == .notFound)

        // Space freed: the same song goes in whole.
        try FileManager.default.removeItem(atPath: filler)
        let response = try submitted(try client.submit(bytes, name: "big.wav"))
        #expect(response.song == id && response.jobs.count == Self.detectorCount)
        let stored = try #require(FileManager.default.contents(atPath: blobs + "/" + SongBlobs.relativePath(for: id)))
        #expect([UInt8](stored) == bytes)
        #expect(server.stop() == 0)
    }

    // MARK: A locked database

    @Test func aDatabaseLockedByAnotherProcessGivesAClearErrorAndRecovers() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(dataDirectory: directory.path, extraArguments: ["--no-local-workers"])
        let client = try ServerClient(server.endpoints)
        let first = try submitted(try client.submit(try TestSong.clickTrack(bpm: 100, seconds: 6), name: "first.wav"))

        // Another process takes the write lock and keeps it (sqlite3's shell, in a transaction).
        let holder = try SQLiteLockHolder(
            path: directory.path + "/library.sqlite", statements: "INSERT INTO jobs SELECT * FROM jobs WHERE 0;")

        let bytes = try TestSong.clickTrack(bpm: 140, seconds: 6)
        let id = SongID(hashing: bytes)
        let started = ContinuousClock.now
        guard case .error(let locked) = try client.submit(bytes, name: "while-locked.wav") else {
            Issue.record("a song was accepted while the database was locked")
            return
        }
        let waited = ContinuousClock.now - started
        #expect(locked.code == .unavailable)
        #expect(locked.message.contains("locked"), "\(locked.message)")
        #expect(locked.retryAfterMs != nil)
        #expect(waited < .seconds(6), "the answer came after the busy timeout, not a hang: \(waited)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/blobs/" + SongBlobs.relativePath(for: id)), "no blob left behind")
        // Reads go on during the lock (WAL): the first song's jobs are there.
        #expect(try client.jobs(of: first.song).count == Self.detectorCount)

        // The lock is released: the same submission goes through.
        holder.release()
        let response = try submitted(try client.submit(bytes, name: "after-lock.wav"))
        #expect(response.song == id && response.jobs.count == Self.detectorCount)
        #expect(server.stop() == 0)
    }
}
