import Foundation
import Synchronization
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing

/// A scan's hashing done by the workers that share the library root (IDENTIFY), and the
/// coordinator hashing itself whenever a worker's answer cannot be used.
@Suite(.serialized) struct IdentifyTests {
    /// How the worker played by the test answers an IDENTIFY.
    enum Behaviour: Sendable {
        /// With each file's true SHA-256, size and time.
        case honest
        /// With a made-up hash and a size the file does not have.
        case stale
        /// Not at all.
        case silent
        /// With the true identities, but under another request's number.
        case otherRequest
        /// With the true identities of all but the last file.
        case miscounted
        /// By leaving (DISCONNECT).
        case leaves
    }

    /// A library root with three songs, a coordinator scanning it and a worker that shares it.
    private struct Setup {
        let directory: TemporaryDirectory
        let music: TemporaryDirectory
        let running: RunningCoordinator
        let songs: [String: SongID]

        init() throws {
            directory = try TemporaryDirectory()
            music = try TemporaryDirectory()
            var songs: [String: SongID] = [:]
            for seed in 1...3 {
                let bytes = try testSong(seed: UInt64(seed))
                try Data(bytes).write(to: URL(fileURLWithPath: music.file("song\(seed).wav")))
                songs["song\(seed).wav"] = SongID(hashing: bytes)
            }
            self.songs = songs
            let root = music.path
            running = try RunningCoordinator(directory: directory.path) { $0.libraryRoots = [root] }
        }

        var root: String { (music.path as NSString).resolvingSymlinksInPath }
    }

    /// Plays a worker offering `fake` on its own thread until `stop`, answering IDENTIFY as
    /// `behaviour` says; returns what it was asked.
    private final class PlayedWorker: Sendable {
        let asked = Mutex<[IdentifyBody]>([])
        let stopped = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)

        init(_ worker: SongTestWorker, music: String, behaviour: Behaviour) {
            nonisolated(unsafe) let worker = worker
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                while !stopped.load(ordering: .relaxed) {
                    try? worker.heartbeat()
                    guard let frames = try? worker.socket.receive(timeout: .milliseconds(20)),
                        case .identify(let request)? = try? CoordinatorMessage(frames: frames)
                    else { continue }
                    asked.withLock { $0.append(request) }
                    let files = request.files.map { file -> FileIdentity in
                        let path = music + "/" + file.path
                        var status = stat()
                        guard let bytes = FileManager.default.contents(atPath: path), stat(path, &status) == 0 else {
                            return FileIdentity(error: ErrorBody(code: .notFound, message: "\(path): gone"))
                        }
                        let mtimeNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
                        if case .stale = behaviour {
                            return FileIdentity(sha256: String(repeating: "e", count: 64), size: Int64(bytes.count + 1), mtimeNs: mtimeNs)
                        }
                        return FileIdentity(sha256: SongID(hashing: bytes).hex, size: Int64(bytes.count), mtimeNs: mtimeNs)
                    }
                    let answer: WorkerMessage
                    switch behaviour {
                    case .honest, .stale: answer = .identified(IdentifiedBody(request: request.request, files: files))
                    case .silent: continue
                    case .otherRequest: answer = .identified(IdentifiedBody(request: request.request + 1000, files: files))
                    case .miscounted:
                        guard files.count > 1 else { continue }
                        answer = .identified(IdentifiedBody(request: request.request, files: files.dropLast()))
                    case .leaves:
                        _ = try? worker.socket.trySend(try WorkerMessage.disconnect(DisconnectBody(reason: "leaving")).frames(version: .v2))
                        return
                    }
                    _ = try? worker.socket.trySend(try answer.frames())
                }
            }
        }

        func stop() {
            stopped.store(true, ordering: .relaxed)
            done.wait()
        }
    }

    private func scan(_ setup: Setup, behaviour: Behaviour, identifies: Bool = true) throws -> (ScanSummary, [IdentifyBody]) {
        let client = try TestClient(setup.running)
        let worker = try SongTestWorker(setup.running, detectors: ["fake"], id: "sharing", roots: [setup.root], identifies: identifies)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            try worker.heartbeat()
            if case .ok(.status(let status)) = try client.request(.status(StatusRequest())), status.server?.workers.count == 1 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let played = PlayedWorker(worker, music: setup.music.path, behaviour: behaviour)
        defer { played.stop() }
        guard case .ok(.scan(let summary))? = try client.request(.scan(ScanRequest()), timeout: .seconds(20)) else {
            throw HarnessError("the scan failed")
        }
        return (summary, played.asked.withLock { $0 })
    }

    /// Every song the scan recorded is the true SHA-256 of its file.
    private func expectTrueSongs(_ setup: Setup) throws {
        for (name, song) in setup.songs {
            let record = try setup.running.coordinator.library.song(song)
            #expect(record != nil, "\(name) is recorded as its true SHA-256")
        }
        #expect(try setup.running.coordinator.library.song(SongID(String(repeating: "e", count: 64))!) == nil)
    }

    @Test func aScanLeavesTheHashingToAWorkerThatSharesTheRoot() throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: .honest)
        #expect(summary.new == 3 && summary.queuedJobs == 3)
        #expect(summary.hashedByWorkers == 3)
        #expect(Set(asked.flatMap(\.files)) == Set(setup.songs.keys.map { JobLocation(root: setup.root, path: $0) }))
        try expectTrueSongs(setup)
    }

    @Test func anAnswerThatNoLongerFitsTheFileIsNotUsed() throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: .stale)
        #expect(!asked.isEmpty)
        #expect(summary.new == 3 && summary.hashedByWorkers == nil, "the coordinator hashed every file itself")
        try expectTrueSongs(setup)
    }

    /// No answer, or one under another request's number: the coordinator hashes the files
    /// once the request's 5 s are over.
    @Test(arguments: [Behaviour.silent, .otherRequest])
    func aWorkerThatDoesNotAnswerLeavesTheHashingToTheCoordinator(behaviour: Behaviour) throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let started = ContinuousClock.now
        let (summary, asked) = try scan(setup, behaviour: behaviour)
        #expect(!asked.isEmpty)
        #expect(summary.new == 3 && summary.hashedByWorkers == nil)
        #expect(ContinuousClock.now - started < .seconds(15), "the scan waited no longer than the request's time limit")
        try expectTrueSongs(setup)
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
        try expectTrueSongs(setup)
    }

    @Test func aWorkerThatDoesNotOfferToIdentifyIsNotAsked() throws {
        let setup = try Setup()
        defer { setup.running.stop() }
        let (summary, asked) = try scan(setup, behaviour: .honest, identifies: false)
        #expect(asked.isEmpty)
        #expect(summary.new == 3 && summary.hashedByWorkers == nil)
        try expectTrueSongs(setup)
    }
}
