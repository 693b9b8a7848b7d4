import Foundation
import Synchronization
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// A scan's hashing done by the workers that share the library root (IDENTIFY), and the
/// coordinator hashing itself whenever a worker's answer cannot be used, or cannot be trusted.
@Suite(.serialized) struct IdentifyTests {
    /// How the worker played by the test answers an IDENTIFY.
    enum Behaviour: Sendable {
        /// With each file's true SHA-256, size and time.
        case honest
        /// With the SHA-256 of a song the library knows, and each file's true size and time.
        case claimsKnownSong(SongID)
        /// With a made-up SHA-256, and each file's true size and time.
        case claimsNewSong
        /// Not at all.
        case silent
        /// With the true identities, but under another request's number.
        case otherRequest
        /// With the true identities of all but the last file.
        case miscounted
        /// By leaving (DISCONNECT).
        case leaves
        /// At once, with every file `unavailable`.
        case unavailable
        /// With the first file's true identity and the others `unavailable`.
        case identifiesOne
    }

    static let madeUpSong = SongID(String(repeating: "e", count: 64))!

    /// A library root with `songs` songs and a coordinator scanning it.
    private struct Setup {
        let directory: TemporaryDirectory
        let music: TemporaryDirectory
        let running: RunningCoordinator
        var songs: [String: SongID] = [:]

        init(songs count: Int = 3, configure: @escaping (inout CoordinatorConfiguration) -> Void = { _ in }) throws {
            directory = try TemporaryDirectory()
            music = try TemporaryDirectory()
            let root = music.path
            running = try RunningCoordinator(directory: directory.path) {
                $0.libraryRoots = [root]
                configure(&$0)
            }
            for seed in 1...count { try add(seed) }
        }

        mutating func add(_ seed: Int) throws {
            let bytes = try testSong(seed: UInt64(seed))
            try Data(bytes).write(to: URL(fileURLWithPath: music.file("song\(seed).wav")))
            songs["song\(seed).wav"] = SongID(hashing: bytes)
        }

        var root: String { (music.path as NSString).resolvingSymlinksInPath }

        /// Every file is recorded as its true SHA-256.
        func expectTrueSongs() throws {
            for (name, song) in songs {
                #expect(try running.coordinator.library.song(atRoot: root, path: name)?.song == song, "\(name)")
            }
        }
    }

    /// Plays a worker offering `fake` on its own thread until `stop`: answers IDENTIFY as
    /// `behaviour` says, and fails every JOB `song-changed` (the file does not hold the song)
    /// when the song is the made-up one, else succeeds at 120 BPM. Records what it was asked.
    private final class PlayedWorker: Sendable {
        let asked = Mutex<[IdentifyBody]>([])
        let jobs = Mutex<[SongJobBody]>([])
        let stopped = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)
        private nonisolated(unsafe) let worker: SongTestWorker

        init(_ worker: SongTestWorker, music: String, behaviour: Behaviour) {
            self.worker = worker
            nonisolated(unsafe) let worker = worker
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                while !stopped.load(ordering: .relaxed) {
                    try? worker.heartbeat()
                    guard let frames = try? worker.socket.receive(timeout: .milliseconds(20)),
                        let message = try? CoordinatorMessage(frames: frames)
                    else { continue }
                    switch message {
                    case .identify(let request):
                        asked.withLock { $0.append(request) }
                        guard let answer = Self.answer(request, music: music, behaviour: behaviour) else {
                            if case .leaves = behaviour {
                                _ = try? worker.socket.trySend(try WorkerMessage.disconnect(DisconnectBody(reason: "leaving")).frames(version: .v2))
                                return
                            }
                            continue
                        }
                        _ = try? worker.socket.trySend(try WorkerMessage.identified(answer).frames())
                    case .songJob(let job, _):
                        jobs.withLock { $0.append(job) }
                        let answers = try? job.jobs.map { entry in
                            job.song == IdentifyTests.madeUpSong
                                ? SongJobAnswer(job: entry.job, attempt: entry.attempt, error: ErrorBody(code: .songChanged, message: "not that song"))
                                : SongJobAnswer(job: entry.job, attempt: entry.attempt, analysis: try SongTestWorker.analysis(entry, bpm: 120))
                        }
                        if let answers { try? worker.answer(job, answers) }
                    default: break
                    }
                }
            }
        }

        /// The IDENTIFIED `behaviour` sends, nil for none.
        private static func answer(_ request: IdentifyBody, music: String, behaviour: Behaviour) -> IdentifiedBody? {
            let files = request.files.map { file -> FileIdentity in
                let path = music + "/" + file.path
                var status = stat()
                guard let bytes = FileManager.default.contents(atPath: path), stat(path, &status) == 0 else {
                    return FileIdentity(error: ErrorBody(code: .notFound, message: "\(path): gone"))
                }
                let mtimeNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
                let sha256: SongID
                switch behaviour {
                case .claimsKnownSong(let song): sha256 = song
                case .claimsNewSong: sha256 = IdentifyTests.madeUpSong
                default: sha256 = SongID(hashing: bytes)
                }
                return FileIdentity(sha256: sha256, size: Int64(bytes.count), mtimeNs: mtimeNs)
            }
            switch behaviour {
            case .honest, .claimsKnownSong, .claimsNewSong: return IdentifiedBody(request: request.request, files: files)
            case .unavailable, .identifiesOne:
                let refused = FileIdentity(error: ErrorBody(code: .unavailable, message: "out of time"))
                var answered = Array(repeating: refused, count: request.files.count)
                if case .identifiesOne = behaviour { answered[0] = files[0] }
                return IdentifiedBody(request: request.request, files: answered)
            case .otherRequest: return IdentifiedBody(request: request.request + 1000, files: files)
            case .miscounted: return files.count > 1 ? IdentifiedBody(request: request.request, files: files.dropLast()) : nil
            case .silent, .leaves: return nil
            }
        }

        /// Stops playing; with `leaving`, the worker says goodbye, so the coordinator forgets it
        /// at once rather than once it has been silent too long.
        func stop(leaving: Bool = true) {
            stopped.store(true, ordering: .relaxed)
            done.wait()
            if leaving { _ = try? worker.socket.trySend(try WorkerMessage.disconnect(DisconnectBody(reason: "done")).frames(version: .v2)) }
        }
    }

    /// A worker sharing the root, registered with the coordinator as its only worker.
    private func connect(_ setup: Setup, _ client: TestClient, identifies: Bool = true) throws -> SongTestWorker {
        let id = "sharing-\(UUID().uuidString.prefix(8))"
        let worker = try SongTestWorker(setup.running, detectors: ["fake"], id: id, roots: [setup.root], identifies: identifies)
        try Wait.until("worker \(id) to be the coordinator's only worker", timeout: .seconds(10)) {
            try worker.heartbeat()
            guard let status = try client.request(.status(StatusRequest())).answer(StatusCommand.self) else { return false }
            return status.server?.workers.map(\.workerId) == [id]
        }
        return worker
    }

    /// Scans with a worker playing `behaviour`; returns the summary and what the worker was asked.
    private func scan(_ setup: Setup, behaviour: Behaviour, identifies: Bool = true) throws -> (ScanSummary, [IdentifyBody]) {
        let client = try TestClient(setup.running)
        let played = PlayedWorker(try connect(setup, client, identifies: identifies), music: setup.music.path, behaviour: behaviour)
        defer { played.stop() }
        guard let summary = try client.request(.scan(ScanRequest()), timeout: .seconds(30))?.answer(ScanCommand.self) else {
            throw HarnessError("the scan failed")
        }
        return (summary, played.asked.withLock { $0 })
    }

    @Test func aScanLeavesTheHashingToAWorkerThatSharesTheRoot() throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: .honest)
        #expect(summary.new == 3 && summary.queuedJobs == 3)
        #expect(summary.hashedByWorkers == 3)
        #expect(asked.count == 1, "one IDENTIFY per worker and batch")
        #expect(Set(asked.flatMap(\.files)) == Set(setup.songs.keys.map { JobLocation(root: setup.root, path: $0) }))
        try setup.expectTrueSongs()
    }

    /// The attack: a worker says a new file holds a song the library knows (with the file's
    /// true size and time), which would make it a copy or a move and queue nothing to check
    /// it. The coordinator hashes such a file itself.
    @Test func aClaimThatAFileHoldsAKnownSongIsCheckedByTheCoordinator() throws {
        var setup = try Setup()
        defer { setup.running.stop() }
        _ = try scan(setup, behaviour: .honest)
        let known = try #require(setup.songs["song1.wav"])
        try setup.add(4)
        let (summary, asked) = try scan(setup, behaviour: .claimsKnownSong(known))
        #expect(asked.flatMap(\.files) == [JobLocation(root: setup.root, path: "song4.wav")])
        #expect(summary.new == 1 && summary.copies == 0 && summary.hashedByWorkers == nil)
        try setup.expectTrueSongs()
        #expect(try setup.running.coordinator.library.locations(of: known).map(\.path) == ["song1.wav"])
    }

    /// A made-up SHA-256 for new bytes is taken (the file's analysis is queued), but the
    /// worker that analyses the file finds it does not hold that song (`song-changed`): the
    /// next scan hashes the file again, whatever its size and time, and records its true song.
    @Test func aMadeUpHashIsUndoneByTheAnalysisAndTheNextScan() throws {
        let setup = try Setup(songs: 1)
        defer { setup.running.stop() }
        let client = try TestClient(setup.running)
        let worker = try connect(setup, client)
        let played = PlayedWorker(worker, music: setup.music.path, behaviour: .claimsNewSong)
        guard let first = try client.request(.scan(ScanRequest()), timeout: .seconds(30))?.answer(ScanCommand.self) else {
            throw HarnessError("the scan failed")
        }
        #expect(first.hashedByWorkers == 1)
        let failed = try client.waitForEvent { event in
            if case .jobFailed(let failure) = event { return failure.song == Self.madeUpSong }
            return false
        }
        played.stop(leaving: false)
        guard case .jobFailed(let failure)? = failed else {
            Issue.record("the made-up song's job did not fail")
            return
        }
        #expect(failure.error.code == .songChanged)
        let honest = PlayedWorker(worker, music: setup.music.path, behaviour: .honest)
        defer { honest.stop() }
        guard let second = try client.request(.scan(ScanRequest()), timeout: .seconds(30))?.answer(ScanCommand.self) else {
            throw HarnessError("the second scan failed")
        }
        #expect(second.unchanged == 0 && second.changed == 1, "the file is looked at again: \(second)")
        try setup.expectTrueSongs()
        #expect(try setup.running.coordinator.library.locations(of: Self.madeUpSong).allSatisfy(\.missing))
    }

    /// No answer, or one under another request's number: the coordinator hashes the files
    /// once the request's 2 s are over, and asks that worker no more (the second batch of 40
    /// files is not sent to it).
    @Test(arguments: [Behaviour.silent, .otherRequest])
    func aWorkerThatDoesNotAnswerIsAskedNoMore(behaviour: Behaviour) throws {
        let setup = try Setup(songs: 40)
        defer { setup.running.stop() }
        let started = ContinuousClock.now
        let (summary, asked) = try scan(setup, behaviour: behaviour)
        #expect(asked.count == 1)
        #expect(summary.new == 40 && summary.hashedByWorkers == nil)
        #expect(ContinuousClock.now - started < .seconds(12), "one wait of the request's time limit, not one per batch")
        try setup.expectTrueSongs()
    }

    /// A worker whose answers identify fewer than half of their files (each `unavailable`, or all
    /// but one, however fast: a hostile worker answering so just before the time limit held every
    /// batch of every scan, attack round 8, M1) is asked no more after two: the third batch of
    /// 70 files is not sent to it, and the coordinator hashes the rest.
    @Test(arguments: [Behaviour.unavailable, .identifiesOne])
    func aWorkerThatIdentifiesLittleIsAskedNoMore(behaviour: Behaviour) throws {
        let setup = try Setup(songs: 70)
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: behaviour)
        #expect(asked.count == 2, "\(asked.map(\.files.count))")
        // Click tracks repeat every 50 seeds: some files are copies of others.
        #expect(summary.files == 70 && summary.new + summary.copies == 70, "\(summary)")
        #expect((summary.hashedByWorkers ?? 0) <= 2, "\(summary)")
        try setup.expectTrueSongs()
    }

    /// An answer with a file missing, or a worker that leaves: the coordinator hashes the
    /// files at once, without waiting for the request's time limit.
    @Test(arguments: [Behaviour.miscounted, .leaves])
    func anAnswerThatCannotBeUsedIsNotWaitedFor(behaviour: Behaviour) throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: behaviour)
        #expect(!asked.isEmpty)
        #expect(summary.new == 3 && summary.hashedByWorkers == nil)
        #expect(summary.seconds < 4, "the scan took \(summary.seconds) s")
        try setup.expectTrueSongs()
    }

    @Test func aWorkerThatDoesNotOfferToIdentifyIsNotAsked() throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: .honest, identifies: false)
        #expect(asked.isEmpty)
        #expect(summary.new == 3 && summary.hashedByWorkers == nil)
        try setup.expectTrueSongs()
    }

    /// A file over the song size limit is never sent to a worker: the coordinator skips it
    /// without reading it.
    @Test func aFileOverTheSizeLimitIsNotSentToAWorker() throws {
        let limit = try testSong(seed: 1).count + 10
        let setup = try Setup(songs: 2) { $0.maxSongBytes = limit }
        defer { setup.running.stop() }
        try Data(count: limit + 1).write(to: URL(fileURLWithPath: setup.music.file("large.wav")))
        let (summary, asked) = try scan(setup, behaviour: .honest)
        #expect(!asked.flatMap(\.files).contains { $0.path == "large.wav" })
        #expect(summary.skipped.map(\.code) == [.tooLarge] && summary.hashedByWorkers == 2)
    }

    /// A server stopped while a scan waits for a worker's IDENTIFIED answers the scan
    /// `unavailable` rather than leaving its client waiting.
    @Test func aServerStoppingDuringAScanAnswersIt() throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let client = try TestClient(setup.running)
        let played = PlayedWorker(try connect(setup, client), music: setup.music.path, behaviour: .silent)
        defer { played.stop() }
        nonisolated(unsafe) let scanning = client
        let outcome = Mutex<ClientReply.Outcome?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let reply = try? scanning.request(.scan(ScanRequest()), timeout: .seconds(20))
            outcome.withLock { $0 = reply ?? nil }
            answered.signal()
        }
        try Wait.until("the worker to be asked to identify the scan's files") { !played.asked.withLock { $0.isEmpty } }
        // The stop is asked for, not waited for: the test's sockets live on until the answer.
        setup.running.coordinator.stop()
        #expect(answered.wait(timeout: .now() + 10) == .success)
        guard case .error(let error)? = outcome.withLock({ $0 }) else {
            Issue.record("the scan was not answered with an error: \(String(describing: outcome.withLock { $0 }))")
            return
        }
        #expect(error.code == .unavailable)
    }
}
