import Foundation
import Synchronization
import TactusAudio
import TactusCoordinator
import TactusDetector
import TactusModel
import TactusProtocol
import TactusStore
import TactusTestSupport
import Testing

@Suite(.serialized) struct CoordinatorTests {
    private func submit(_ client: TestClient, _ bytes: [UInt8], detectors: [String] = ["fake"], force: Bool = false) throws -> ClientReply.Outcome {
        try client.request(.submit(SubmitRequest(name: "song.wav", detectors: detectors, force: force), audio: bytes))
    }

    private func submitted(_ outcome: ClientReply.Outcome) throws -> SubmitResponse {
        guard let response = outcome.answer(SubmitCommand.self) else { throw HarnessError("submit failed: \(outcome)") }
        return response
    }

    @Test func aSubmittedSongIsAnalysedStoredAndQueryable() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w1")
        let bytes = try testSong()

        let response = try submitted(try submit(client, bytes))
        #expect(response.song == SongID(hashing: bytes))
        #expect(response.jobs.map(\.state) == [.queued])

        let (job, audio) = try #require(try worker.nextJob())
        #expect(audio == bytes)
        #expect(job.attempt == 1 && job.song == response.song)
        try worker.finish(job, bpm: 128)

        let done = try client.waitForEvent { if case .songDone(let body) = $0 { body.song == response.song } else { false } }
        guard case .songDone(let body)? = done else { Issue.record("no song.done"); return }
        #expect(body.consensus.bpm == 128)

        guard let (result, envelope) = try client.request(.result(ResultRequest(song: response.song, envelope: true))).answer(ResultCommand.self).map({ ($0.body, $0.envelope) }) else {
            Issue.record("no result")
            return
        }
        #expect(result.analyses.map(\.bpm) == [128])
        #expect(envelope == [0.1, 0.2, 0.3])
        #expect(result.durationS == 6)

        guard let list = try client.request(.query(QueryRequest(minBpm: 120, maxBpm: 130))).answer(QueryCommand.self) else {
            Issue.record("no query answer")
            return
        }
        #expect(list.songs.map(\.song) == [response.song])
        guard let none = try client.request(.query(QueryRequest(minBpm: 60, maxBpm: 100))).answer(QueryCommand.self) else { return }
        #expect(none.songs.isEmpty)
    }

    @Test func jobsGoToTheWorkerIdleTheLongest() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let first = try TestWorker(running, id: "first")
        // READYs on two connections may arrive in either order: let the first be registered.
        try client.waitForWorkers(1, heartbeating: first)
        let second = try TestWorker(running, id: "second")
        try client.waitForWorkers(2, heartbeating: first)
        _ = try submitted(try submit(client, try testSong(seed: 1)))
        let job = try #require(try first.nextJob(timeout: .seconds(3)))
        _ = try submitted(try submit(client, try testSong(seed: 2)))
        let other = try #require(try second.nextJob(timeout: .seconds(3)))
        #expect(job.0.job != other.0.job)
    }

    @Test func anAcceptedReadyIsAnsweredAtOnceNotAtTheNextHeartbeat() throws {
        let directory = try TemporaryDirectory()
        // Heartbeats every 20 s. The loop's first turn heartbeats; a status answered means that
        // turn is over, so the next heartbeat is 20 s away when the worker connects.
        let running = try RunningCoordinator(directory: directory.path) { $0.heartbeatIntervalS = 20 }
        defer { running.stop() }
        _ = try TestClient(running).request(.status(StatusRequest()))
        let worker = try TestWorker(running, id: "just-connected")
        let frames = try #require(try worker.socket.receive(timeout: .seconds(5)), "READY unanswered")
        #expect(try CoordinatorMessage(frames: frames) == .heartbeat)
    }

    @Test func aSilentWorkerIsLostWhenItsExpiryPassesNotAtTheNextHeartbeat() throws {
        let directory = try TemporaryDirectory()
        // Expiry 3 s, heartbeats 3 s apart from the loop's first turn (over once a status is
        // answered); READY half-way between two heartbeats. Checked only at heartbeats, the
        // worker would be lost 4.5 s after READY.
        let running = try RunningCoordinator(directory: directory.path) {
            $0.heartbeatIntervalS = 3
            $0.liveness = 1
        }
        defer { running.stop() }
        let client = try TestClient(running)
        _ = try client.request(.status(StatusRequest()))
        Thread.sleep(forTimeInterval: 1.5)
        let worker = try TestWorker(running, id: "goes-silent")
        let ready = ContinuousClock.now
        let lost = try withExtendedLifetime(worker) {
            try client.waitForEvent {
                if case .workerLost(let event) = $0 { event.workerId == "goes-silent" } else { false }
            }
        }
        let after = ContinuousClock.now - ready
        #expect(lost != nil)
        #expect(after >= .seconds(3) && after < .milliseconds(4000), "lost \(after) after READY")
    }

    @Test func aSilentWorkersJobIsRequeuedAndItsLateResultDiscarded() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.liveness = 3 }
        defer { running.stop() }
        let client = try TestClient(running)
        let silent = try TestWorker(running, id: "silent")
        let response = try submitted(try submit(client, try testSong()))
        let (lostJob, _) = try #require(try silent.nextJob())
        // The silent worker stops heartbeating; a live one joins and gets the job again.
        let live = try TestWorker(running, id: "live")
        let (retried, _) = try #require(try live.nextJob(timeout: .seconds(5)))
        #expect(retried.job == lostJob.job)
        #expect(retried.attempt == 2)
        try silent.finish(lostJob, bpm: 90)  // stale: attempt 1
        try live.finish(retried, bpm: 140)
        let done = try client.waitForEvent { if case .songDone = $0 { true } else { false } }
        #expect(done != nil)
        let analyses = try running.coordinator.library.analyses(of: response.song)
        #expect(analyses.map(\.record.analysis.bpm) == [140])
        #expect(analyses.map(\.record.worker) == ["live"])
    }

    @Test func aJobWhoseWorkersKeepDyingFailsAfterItsLastAttempt() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) {
            $0.maxAttempts = 2
            $0.liveness = 3
        }
        defer { running.stop() }
        let client = try TestClient(running)
        _ = try submitted(try submit(client, try testSong()))
        for attempt in 1...2 {
            let worker = try TestWorker(running, id: "doomed\(attempt)")
            let (job, _) = try #require(try worker.nextJob())
            #expect(job.attempt == attempt)
            // Goes silent: dies.
        }
        let failed = try client.waitForEvent { if case .jobFailed = $0 { true } else { false } }
        guard case .jobFailed(let body)? = failed else { Issue.record("no job.failed"); return }
        #expect(body.error.code == .workerLost)
        #expect(body.attempts == 2)
    }

    @Test func aJobPastItsTimeLimitIsTreatedLikeADeadWorker() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.jobTimeLimitS = 0.5 }
        defer { running.stop() }
        let client = try TestClient(running)
        _ = try submitted(try submit(client, try testSong()))
        let slow = try TestWorker(running, id: "slow")
        let (job, _) = try #require(try slow.nextJob())
        let fast = try TestWorker(running, id: "fast")
        // The slow worker keeps heartbeating but never answers; the job moves on.
        let (retried, _) = try #require(try fast.nextJob(timeout: .seconds(5)))
        #expect(retried.job == job.job && retried.attempt == 2)
        try slow.heartbeat()
    }

    @Test func aDecodeFailureFailsTheJobAtOnceWithItsCode() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w")
        _ = try submitted(try submit(client, try testSong()))
        let (job, _) = try #require(try worker.nextJob())
        try worker.fail(job, code: .corrupt, message: "song.wav: bad data")
        let failed = try client.waitForEvent { if case .jobFailed = $0 { true } else { false } }
        guard case .jobFailed(let body)? = failed else { Issue.record("no job.failed"); return }
        #expect(body.error.code == .corrupt)
        #expect(body.attempts == 1)
        // The worker is idle again and gets the next song.
        _ = try submitted(try submit(client, try testSong(seed: 9)))
        #expect(try worker.nextJob() != nil)
    }

    /// A worker's error message of 1.2 MB (the fourth attack round's took the coordinator to
    /// 812 MB through subscribers that did not read its events) is cut to 1000 characters
    /// before it is stored or published.
    @Test func aWorkersLongErrorMessageIsCut() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w")
        let response = try submitted(try submit(client, try testSong()))
        let (job, _) = try #require(try worker.nextJob())
        try worker.fail(job, code: .corrupt, message: String(repeating: "E", count: 1_200_000))
        let failed = try client.waitForEvent { if case .jobFailed = $0 { true } else { false } }
        guard case .jobFailed(let body)? = failed else { Issue.record("no job.failed"); return }
        let cut = String(repeating: "E", count: ErrorBody.maxPeerMessageCharacters - 1) + "…"
        #expect(body.error.code == .corrupt && body.error.message == cut)
        let status = try #require(try client.request(.status(StatusRequest(song: response.song.hex))).answer(StatusCommand.self))
        #expect(status.jobs.first?.error?.message == cut)
    }

    @Test func aResultArrivingWhileTheLibraryIsLockedIsRedoneOnceItIsWritable() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.databaseBusyTimeoutS = 0.2 }
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w")
        let response = try submitted(try submit(client, try testSong()))
        let (job, _) = try #require(try worker.nextJob())

        // Another process holds the write lock while the result arrives: it cannot be stored.
        let holder = try SQLiteLockHolder(path: directory.path + "/library.sqlite")
        try worker.finish(job, bpm: 111)
        // The coordinator has taken the result (and failed to store it) once it no longer
        // counts the job as the worker's.
        try Wait.until("the coordinator to take worker w's result") {
            try worker.heartbeat()
            guard let status = try client.request(.status(StatusRequest())).answer(StatusCommand.self) else { return false }
            return status.server?.workers.first { $0.workerId == "w" }.map { $0.job == nil } == true
        }
        holder.release()

        // Once the library is writable the job runs again and its result is stored.
        let (again, _) = try #require(try worker.nextJob(timeout: .seconds(10)))
        #expect(again.job == job.job && again.attempt == 2)
        try worker.finish(again, bpm: 111)
        let done = try client.waitForEvent { if case .songDone(let body) = $0 { body.song == response.song } else { false } }
        #expect(done != nil)
    }

    @Test func badSubmissionsGetClearErrors() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        var noise = SeededGenerator(seed: 3)
        let garbage = (0..<100_000).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
        guard case .error(let unsupported) = try submit(client, garbage) else { Issue.record("garbage accepted"); return }
        #expect(unsupported.code == .unsupportedFormat)
        #expect(unsupported.message.contains("song.wav"))
        guard case .error(let empty) = try submit(client, []) else { Issue.record("empty accepted"); return }
        #expect(empty.code == .empty)
        guard case .error(let unknown) = try submit(client, try testSong(), detectors: ["nonesuch"]) else {
            Issue.record("unknown detector accepted")
            return
        }
        #expect(unknown.code == .unknownDetector)
        guard case .error(let forbidden) = try client.request(.submit(SubmitRequest(path: "/etc/passwd"), audio: nil)) else {
            Issue.record("path accepted without library roots")
            return
        }
        #expect(forbidden.code == .forbidden)
    }

    /// Parameters for a detector the submission does not ask for would silently do nothing:
    /// they are a `bad-request` naming the detector, and nothing is queued.
    @Test func paramsForADetectorNotAskedForAreABadRequest() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let request = SubmitRequest(name: "song.wav", detectors: ["fake"], params: ["other": ParameterSet()])
        guard case .error(let error) = try TestClient(running).request(.submit(request, audio: try testSong())) else {
            Issue.record("params for a detector not asked for were accepted")
            return
        }
        #expect(error.code == .badRequest)
        #expect(error.message.contains("other"))
    }

    @Test func songNamesFromClientsNeverReachTheFileSystem() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let bytes = try testSong()
        _ = try submitted(try submit(client, bytes))
        // A file in the coordinator's working directory holding the song's bytes: a name that
        // is a file path must not be hashed and resolved to the song.
        let name = ".tactus-test-\(UInt32.random(in: 0 ... .max)).wav"
        let path = FileManager.default.currentDirectoryPath + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for request in [ClientRequest.Body.result(ResultRequest(song: name)), .compare(CompareRequest(song: name)), .truth(TruthRequest(song: name))] {
            guard case .error(let error) = try client.request(request) else {
                Issue.record("\(request.command) resolved a file name")
                continue
            }
            #expect(error.code == .badRequest)
        }
    }

    @Test func aMalformedPlaylistProfileIsABadRequest() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        guard case .error(let error) = try TestClient(running).request(.playlist(PlaylistQuery(profile: "10m@fast"))) else {
            Issue.record("a malformed profile was accepted")
            return
        }
        #expect(error.code == .badRequest)
    }

    @Test func pathsAreConfinedToTheLibraryRoots() throws {
        let directory = try TemporaryDirectory()
        let library = try TemporaryDirectory()
        let song = library.file("song.wav")
        try Data(try testSong()).write(to: URL(fileURLWithPath: song))
        try FileManager.default.createSymbolicLink(atPath: library.file("escape"), withDestinationPath: "/etc/passwd")
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [library.path] }
        defer { running.stop() }
        let client = try TestClient(running)
        guard try client.request(.submit(SubmitRequest(path: song, detectors: ["fake"]), audio: nil)).answer(SubmitCommand.self) != nil else {
            Issue.record("a file inside the root was refused")
            return
        }
        for outside in [library.file("escape"), library.path + "/../" + (directory.path as NSString).lastPathComponent] {
            guard case .error(let error) = try client.request(.submit(SubmitRequest(path: outside, detectors: ["fake"]), audio: nil)) else {
                Issue.record("\(outside) was accepted")
                continue
            }
            #expect(error.code == .forbidden || error.code == .notFound)
        }
    }

    /// A symbolic link below a root is refused even when it points inside: the path is opened
    /// component by component without following links, so no link can be swapped in.
    @Test func aSymbolicLinkBelowTheRootIsRefusedEvenWhenItPointsInside() throws {
        let directory = try TemporaryDirectory()
        let library = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: library.file("real"), withIntermediateDirectories: false)
        try Data(try testSong()).write(to: URL(fileURLWithPath: library.file("real/song.wav")))
        try FileManager.default.createSymbolicLink(atPath: library.file("linked"), withDestinationPath: library.file("real"))
        try FileManager.default.createSymbolicLink(atPath: library.file("alias.wav"), withDestinationPath: library.file("real/song.wav"))
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [library.path] }
        defer { running.stop() }
        let client = try TestClient(running)
        for path in [library.file("linked/song.wav"), library.file("alias.wav")] {
            guard case .error(let error) = try client.request(.submit(SubmitRequest(path: path, detectors: ["fake"]), audio: nil)) else {
                Issue.record("\(path) was accepted through a symbolic link")
                continue
            }
            #expect(error.code == .forbidden)
            #expect(error.message.contains(path) && error.message.contains("symbolic link"))
        }
    }

    /// A directory below a root swapped for a link to a directory outside, again and again,
    /// while the same path is submitted: the song outside is never accepted.
    @Test func aDirectorySwappedForALinkNeverLeadsOutOfTheRoot() throws {
        let directory = try TemporaryDirectory()
        let library = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: library.file("d.real"), withIntermediateDirectories: false)
        try Data(try testSong(seed: 1)).write(to: URL(fileURLWithPath: library.file("d.real/song.wav")))
        let secret = try testSong(seed: 2)
        try Data(secret).write(to: URL(fileURLWithPath: outside.file("song.wav")))
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [library.path] }
        defer { running.stop() }
        let client = try TestClient(running)
        let stop = Atomic<Bool>(false)
        let swapper = Thread {
            let (real, link) = (library.file("d.real"), library.file("d"))
            while !stop.load(ordering: .relaxed) {
                rename(real, link)
                rename(link, real)
                symlink(outside.path, link)
                unlink(link)
            }
        }
        swapper.start()
        defer { stop.store(true, ordering: .relaxed) }
        var escaped = 0
        for _ in 0..<400 {
            if let response = try client.request(
                .submit(SubmitRequest(path: library.file("d/song.wav"), detectors: ["fake"], force: true), audio: nil)).answer(SubmitCommand.self),
                response.song == SongID(hashing: secret) {
                escaped += 1
            }
        }
        #expect(escaped == 0, "the song outside the root was accepted \(escaped) times")
    }

    /// A root replaced by a symbolic link to a folder outside while the server runs: the roots
    /// were resolved when the coordinator started and are kept, so neither a submission by path
    /// nor a scan reaches the song outside; both are refused naming the link.
    @Test func aRootReplacedByALinkAfterStartIsRefused() throws {
        let directory = try TemporaryDirectory()
        let parent = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        let root = parent.file("music")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try Data(try testSong(seed: 1)).write(to: URL(fileURLWithPath: root + "/song.wav"))
        let secret = try testSong(seed: 2)
        try Data(secret).write(to: URL(fileURLWithPath: outside.file("song.wav")))
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [root] }
        defer { running.stop() }
        let client = try TestClient(running)

        try FileManager.default.moveItem(atPath: root, toPath: parent.file("music.old"))
        try FileManager.default.createSymbolicLink(atPath: root, withDestinationPath: outside.path)
        let submit = try client.request(.submit(SubmitRequest(path: root + "/song.wav", detectors: ["fake"]), audio: nil))
        guard case .error(let error) = submit else {
            Issue.record("the song behind the swapped root was accepted: \(String(describing: submit))")
            return
        }
        #expect(error.code == .unavailable)
        #expect(error.message.contains("music is now a symbolic link"), "\(error.message)")

        let scan = try client.request(.scan(ScanRequest()), timeout: .seconds(30))
        if let summary = scan?.answer(ScanCommand.self) {
            #expect(summary.new == 0 && summary.queuedJobs == 0, "the scan followed the swapped root: \(summary)")
        } else if case .error(let refused)? = scan {
            #expect(refused.message.contains("symbolic link"), "\(refused.message)")
        } else {
            Issue.record("no answer to scan")
        }
        let known = try running.coordinator.library.song(SongID(hashing: secret))
        #expect(known == nil, "the song outside the root is in the library")
    }

    /// A file below a root that is not audio is refused without quoting any of its bytes.
    @Test func aFileThatIsNotAudioIsNeverQuoted() throws {
        let directory = try TemporaryDirectory()
        let library = try TemporaryDirectory()
        let text = library.file("notes.wav")
        try Data("PASSWD=hunter2 and more secret text".utf8).write(to: URL(fileURLWithPath: text))
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [library.path] }
        defer { running.stop() }
        let request = SubmitRequest(path: text, detectors: ["fake"])
        guard case .error(let error) = try TestClient(running).request(.submit(request, audio: nil)) else {
            Issue.record("a text file was accepted")
            return
        }
        #expect(error.code == .unsupportedFormat)
        #expect(error.message.contains("notes.wav"))
        #expect(!error.message.contains("50 41 53 53") && !error.message.contains("hunter2"), "\(error.message)")
    }

    /// A file over the audio size limit is `too-large` from its size on the open descriptor,
    /// before any of it is read: a sparse file of 200 GB costs the coordinator nothing.
    @Test func aHugeFileIsTooLargeBeforeItIsRead() throws {
        let directory = try TemporaryDirectory()
        let library = try TemporaryDirectory()
        let huge = library.file("huge.wav")
        guard FileManager.default.createFile(atPath: huge, contents: nil), truncate(huge, off_t(200) << 30) == 0 else {
            // Some file systems cannot hold a sparse file this large; the limit is then not exercised here.
            return
        }
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [library.path] }
        defer { running.stop() }
        let request = SubmitRequest(path: huge, detectors: ["fake"])
        guard case .error(let error) = try TestClient(running).request(.submit(request, audio: nil)) else {
            Issue.record("a 200 GB file was accepted")
            return
        }
        #expect(error.code == .tooLarge)
        #expect(error.message.contains(huge))
    }

    /// A FIFO below a root is refused as not a regular file, without blocking the intake.
    @Test func aFIFOBelowTheRootIsNotARegularFile() throws {
        let directory = try TemporaryDirectory()
        let library = try TemporaryDirectory()
        let fifo = library.file("pipe.wav")
        #expect(mkfifo(fifo, 0o600) == 0)
        let running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [library.path] }
        defer { running.stop() }
        let request = SubmitRequest(path: fifo, detectors: ["fake"])
        guard case .error(let error) = try TestClient(running).request(.submit(request, audio: nil)) else {
            Issue.record("a FIFO was accepted")
            return
        }
        #expect(error.code == .unreadable)
        #expect(error.message.contains("not a regular file"))
    }

    /// The slow steps of a submission (hashing, checking, storing the song) run off the poll
    /// loop: while a large song's blob is being written and flushed, another client's query
    /// and status are answered, before the submission's own answer.
    @Test func aSubmissionBeingStoredHoldsUpNoOtherRequest() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) {
            $0.durability = .powerLoss
            // In one message, as a client older than uploads sends it.
            $0.maxInlineSongBytes = 128 << 20
        }
        defer { running.stop() }
        let other = try TestClient(running)
        let song = silentWAV(dataBytes: 96 << 20)

        let answers = Mutex<[String]>([])
        let submitted = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let outcome = try? TestClient(running).request(
                .submit(SubmitRequest(name: "long.wav", detectors: ["fake"]), audio: song), timeout: .seconds(60))
            if outcome?.answer(SubmitCommand.self) != nil { answers.withLock { $0.append("submit") } }
            submitted.signal()
        }
        // The song's blob is being written once its partial file shows in the blob directory.
        let blobs = directory.path + "/blobs"
        let deadline = ContinuousClock.now + .seconds(30)
        while !partialBlobExists(under: blobs) {
            guard ContinuousClock.now < deadline, submitted.wait(timeout: .now()) == .timedOut else {
                Issue.record("never saw the song's blob being written")
                return
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
        guard let list = try other.request(.query(QueryRequest(minBpm: 60, maxBpm: 200)), timeout: .seconds(10))?.answer(QueryCommand.self),
            let status = try other.request(.status(StatusRequest()), timeout: .seconds(10))?.answer(StatusCommand.self)
        else {
            Issue.record("no answer to a query or status during the submission")
            return
        }
        answers.withLock { $0.append("query and status") }
        #expect(list.songs.isEmpty)
        #expect(status.server?.accepting == true)
        #expect(submitted.wait(timeout: .now() + 60) == .success)
        #expect(answers.withLock { $0 } == ["query and status", "submit"])
    }

    @Test func aFullQueueAnswersBusyWithARetryHint() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxQueuedJobs = 1 }
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w")  // takes the first job and keeps it
        _ = try submitted(try submit(client, try testSong(seed: 1)))
        _ = try #require(try worker.nextJob())
        _ = try submitted(try submit(client, try testSong(seed: 2)))
        guard case .error(let busy) = try submit(client, try testSong(seed: 3)) else {
            Issue.record("an over-full queue accepted a song")
            return
        }
        #expect(busy.code == .busy)
        #expect((busy.retryAfterMs ?? 0) > 0)
    }

    @Test func anAnalysedSongIsAnsweredFromTheLibraryUnlessForced() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w")
        let bytes = try testSong()
        _ = try submitted(try submit(client, bytes))
        let (job, _) = try #require(try worker.nextJob())
        try worker.finish(job, bpm: 100)
        _ = try client.waitForEvent { if case .songDone = $0 { true } else { false } }
        let again = try submitted(try submit(client, bytes))
        #expect(again.jobs.map(\.state) == [.done])
        let forced = try submitted(try submit(client, bytes, force: true))
        #expect(forced.jobs.map(\.state) == [.queued])
    }

    @Test func queuedJobsSurviveARestart() throws {
        let directory = try TemporaryDirectory()
        var first: RunningCoordinator? = try RunningCoordinator(directory: directory.path)
        let response = try submitted(try submit(try TestClient(first!), try testSong(), detectors: ["fake"]))
        first?.stop()
        first = nil
        _ = response
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let worker = try TestWorker(running, id: "after-restart")
        let (job, _) = try #require(try worker.nextJob())
        #expect(job.song == response.song)
    }

    @Test func cancellingASongEndsItsQueuedJobs() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let response = try submitted(try submit(client, try testSong(), detectors: ["fake"]))
        guard let cancelled = try client.request(.cancel(CancelRequest(song: response.song))).answer(CancelCommand.self) else {
            Issue.record("cancel failed")
            return
        }
        #expect(cancelled.cancelled == response.jobs.map(\.job))
        let worker = try TestWorker(running, id: "w")
        #expect(try worker.nextJob(timeout: .milliseconds(600)) == nil)
    }
}

/// A WAV file of 16-bit stereo 44.1 kHz silence with `dataBytes` bytes of samples.
private func silentWAV(dataBytes: Int) -> [UInt8] {
    func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    var bytes = Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVEfmt ".utf8) + le32(16)
    bytes += le16(1) + le16(2) + le32(44_100) + le32(44_100 * 4) + le16(4) + le16(16)
    bytes += Array("data".utf8) + le32(dataBytes)
    bytes += [UInt8](repeating: 0, count: dataBytes)
    return bytes
}

/// True when a blob is being written under `root` (its `.partial` file exists).
private func partialBlobExists(under root: String) -> Bool {
    let folders = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    return folders.contains { folder in
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)) ?? []).contains { $0.hasSuffix(".partial") }
    }
}
