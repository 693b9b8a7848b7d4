import Foundation
import TactusAudioProbe
import TactusCoordinator
import TactusDetector
import TactusProtocol
import TactusStore
import TactusTestSupport
import TactusZMQ
import Testing

/// CURVE with a ZAP handler in the coordinator's poll loop, and refusing to listen beyond
/// loopback without it.
@Suite struct CurveCoordinatorTests {
    /// Directories with the public certificates of `clients` and of `workers`, and a
    /// coordinator admitting them in those roles.
    private func curveCoordinator(
        _ directory: TemporaryDirectory, server: CurveKeyPair, clients: [CurveKeyPair], workers: [CurveKeyPair] = [],
        configure: (inout CoordinatorConfiguration) -> Void = { _ in }
    ) throws -> RunningCoordinator {
        var directories = [String]()
        for (role, pairs) in [("clients", clients), ("workers", workers)] {
            let keysDirectory = directory.path + "/authorized-" + role
            try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true)
            for (index, pair) in pairs.enumerated() {
                _ = try CurveCertificate(keyPair: pair).save(name: "peer\(index)", in: keysDirectory)
            }
            directories.append(keysDirectory)
        }
        return try RunningCoordinator(directory: directory.path + "/data") {
            $0.security = CoordinatorSecurity(
                keyPair: server, authorizedClientsDirectory: directories[0], authorizedWorkersDirectory: directories[1])
            configure(&$0)
        }
    }

    @Test func anAuthorizedClientAndWorkerGetInAndAnUnauthorizedClientGetsNoAnswer() throws {
        let directory = try TemporaryDirectory()
        let server = try CurveKeyPair.generate()
        let alice = try CurveKeyPair.generate()
        let workerKeys = try CurveKeyPair.generate()
        let running = try curveCoordinator(directory, server: server, clients: [alice], workers: [workerKeys])
        defer { running.stop() }

        let client = try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: alice))
        let worker = try TestWorker(running, id: "w1", curve: CurveClientKeys(serverKey: server.publicKey, keyPair: workerKeys))
        try client.waitForWorkers(1, heartbeating: worker)

        // A full round trip over CURVE: the job reaches the worker, the event reaches the client.
        let bytes = try testSong()
        guard let submitted = try client.request(
            .submit(SubmitRequest(name: "song.wav", detectors: ["fake"]), audio: bytes)).answer(SubmitCommand.self)
        else { Issue.record("submit refused"); return }
        let (job, audio) = try #require(try worker.nextJob())
        #expect(audio == bytes)
        try worker.finish(job, bpm: 120)
        #expect(try client.waitForEvent { if case .songDone(let body) = $0 { body.song == submitted.song } else { false } } != nil)

        let mallory = try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: CurveKeyPair.generate()))
        #expect(try mallory.request(.status(StatusRequest()), timeout: .milliseconds(800)) == nil)
        // Without CURVE at all, no answer either.
        let plain = try TestClient(running)
        #expect(try plain.request(.status(StatusRequest()), timeout: .milliseconds(500)) == nil)
        // The authorized client is still served.
        #expect(try client.request(.status(StatusRequest()), timeout: .seconds(5)) != nil)
    }

    /// The per-client job limit counts the jobs of a CURVE key on all its connections.
    @Test func theJobLimitCountsAKeyAcrossItsConnections() throws {
        let directory = try TemporaryDirectory()
        let server = try CurveKeyPair.generate()
        let alice = try CurveKeyPair.generate()
        let bob = try CurveKeyPair.generate()
        let running = try curveCoordinator(directory, server: server, clients: [alice, bob]) { $0.maxClientJobs = 2 }
        defer { running.stop() }
        let connections = try (0..<4).map { _ in
            try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: alice))
        }
        var outcomes = [ClientReply.Outcome]()
        for (seed, connection) in connections.enumerated() {
            outcomes.append(try connection.request(
                .submit(SubmitRequest(name: "s\(seed).wav", detectors: ["fake"]), audio: try testSong(seed: UInt64(seed + 1)))))
        }
        let accepted = outcomes.filter { if case .ok = $0 { true } else { false } }.count
        #expect(accepted == 2, "\(accepted) of 4 submissions by one key on 4 connections were accepted")
        let other = try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: bob))
        guard case .ok = try other.request(.submit(SubmitRequest(name: "b.wav", detectors: ["fake"]), audio: try testSong(seed: 9))) else {
            Issue.record("another key was held back by the first one's jobs")
            return
        }
    }

    /// Keys have roles: a client's key cannot join as a worker (and take other clients'
    /// songs, or store fake tempi), a worker's key cannot use the frontend.
    @Test func aClientKeyCannotActAsAWorkerNorAWorkerKeyAsAClient() throws {
        let directory = try TemporaryDirectory()
        let server = try CurveKeyPair.generate()
        let alice = try CurveKeyPair.generate()
        let workerKeys = try CurveKeyPair.generate()
        let running = try curveCoordinator(directory, server: server, clients: [alice], workers: [workerKeys])
        defer { running.stop() }
        let client = try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: alice))
        let impostor = try TestWorker(running, id: "impostor", curve: CurveClientKeys(serverKey: server.publicKey, keyPair: alice))
        try impostor.awaitRefusal()
        guard let status = try client.request(.status(StatusRequest())).answer(StatusCommand.self) else {
            Issue.record("status refused"); return
        }
        #expect(status.server?.workers.isEmpty == true, "a client's key joined as a worker")
        guard case .ok = try client.request(.submit(SubmitRequest(name: "song.wav", detectors: ["fake"]), audio: try testSong())) else {
            Issue.record("submit refused"); return
        }
        #expect(try impostor.nextJob(timeout: .milliseconds(300)) == nil)
        let workerAsClient = try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: workerKeys))
        #expect(try workerAsClient.request(.status(StatusRequest()), timeout: .milliseconds(800)) == nil)
        // The worker's key does get in as a worker.
        let worker = try TestWorker(running, id: "w1", curve: CurveClientKeys(serverKey: server.publicKey, keyPair: workerKeys))
        try client.waitForWorkers(1, heartbeating: worker)
    }

    @Test func anUnauthorizedWorkerNeverJoins() throws {
        let directory = try TemporaryDirectory()
        let server = try CurveKeyPair.generate()
        let alice = try CurveKeyPair.generate()
        let running = try curveCoordinator(directory, server: server, clients: [alice])
        defer { running.stop() }
        let client = try TestClient(running, curve: CurveClientKeys(serverKey: server.publicKey, keyPair: alice))
        let intruder = try TestWorker(running, id: "intruder", curve: CurveClientKeys(serverKey: server.publicKey, keyPair: CurveKeyPair.generate()))
        // A worker with the right key but the wrong server key fails the handshake too.
        let confused = try TestWorker(running, id: "confused", curve: CurveClientKeys(serverKey: CurveKeyPair.generate().publicKey, keyPair: alice))
        try intruder.awaitRefusal()
        try confused.awaitRefusal()
        guard let status = try client.request(.status(StatusRequest())).answer(StatusCommand.self) else {
            Issue.record("status refused"); return
        }
        #expect(status.server?.workers.isEmpty == true)
        #expect(try intruder.nextJob(timeout: .milliseconds(200)) == nil)
    }

    @Test func listeningBeyondLoopbackWithoutCurveIsRefusedUnlessInsecure() throws {
        let directory = try TemporaryDirectory()
        var configuration = CoordinatorConfiguration(
            dataDirectory: directory.path, frontend: "tcp://0.0.0.0:*", backend: "tcp://127.0.0.1:*", events: "tcp://127.0.0.1:*")
        #expect {
            _ = try Coordinator(configuration: configuration, probe: AudioProbe(), logger: .init(label: "test"))
        } throws: { error in
            "\(error)".contains("refusing to listen on tcp://0.0.0.0:* without CURVE") && "\(error)".contains("--insecure")
        }
        configuration.allowInsecure = true
        _ = try Coordinator(configuration: configuration, probe: AudioProbe(), logger: .init(label: "test"))
    }

    @Test(arguments: [
        ("tcp://127.0.0.1:5555", true), ("tcp://127.3.2.1:*", true), ("tcp://localhost:5555", true),
        ("tcp://[::1]:5555", true), ("ipc:///tmp/tactus.sock", true), ("inproc://coordinator", true),
        ("tcp://*:5555", false), ("tcp://0.0.0.0:5555", false), ("tcp://192.168.1.4:5555", false),
        ("tcp://[::]:5555", false), ("tcp://eth0:5555", false), ("tcp://127.0.0.1.example.com:5555", false),
        ("tcp://1270.0.0.1:5", false),
    ])
    func loopbackAddresses(endpoint: String, loopback: Bool) {
        #expect(BindAddress.isLoopback(endpoint) == loopback)
    }
}

/// The coordinator's limits, each with its error code.
@Suite struct CoordinatorLimitTests {
    @Test func aSongOverTheSizeLimitIsTooLarge() throws {
        let directory = try TemporaryDirectory()
        let bytes = try testSong()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxSongBytes = bytes.count - 1 }
        defer { running.stop() }
        let client = try TestClient(running)
        guard case .error(let error) = try client.request(.submit(SubmitRequest(name: "big.wav", detectors: ["fake"]), audio: bytes)) else {
            Issue.record("a song over the limit was accepted"); return
        }
        #expect(error.code == .tooLarge)
        #expect(error.message.contains("\(bytes.count - 1)"))
        // Nothing was stored.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/blobs").filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test func aSongOverTheDurationLimitIsTooLong() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(
            directory: directory.path, probe: AudioProbe(decoding: .init(minimumSeconds: 1, maximumSeconds: 3)))
        defer { running.stop() }
        let client = try TestClient(running)
        guard case .error(let error) = try client.request(.submit(SubmitRequest(name: "long.wav", detectors: ["fake"]), audio: try testSong())) else {
            Issue.record("a 6 s song was accepted with a 3 s limit"); return
        }
        #expect(error.code == .tooLong)
    }

    @Test func aClientOverItsJobLimitIsBusyUntilItsJobsFinish() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxClientJobs = 2 }
        defer { running.stop() }
        let client = try TestClient(running)
        let other = try TestClient(running)
        func submit(_ by: TestClient, seed: UInt64) throws -> ClientReply.Outcome {
            try by.request(.submit(SubmitRequest(name: "s\(seed).wav", detectors: ["fake"]), audio: try testSong(seed: seed)))
        }
        guard case .ok = try submit(client, seed: 1), case .ok = try submit(client, seed: 2) else {
            Issue.record("the first two jobs were refused"); return
        }
        guard case .error(let busy) = try submit(client, seed: 3) else { Issue.record("a third job was accepted"); return }
        #expect(busy.code == .busy)
        #expect((busy.retryAfterMs ?? 0) > 0)
        // Another client is not held back by the first one's jobs.
        guard case .ok = try submit(other, seed: 4) else { Issue.record("another client was refused"); return }

        // Once a job of the first client finishes, it may submit again.
        let worker = try TestWorker(running, id: "w1")
        let (job, _) = try #require(try worker.nextJob())
        try worker.finish(job, bpm: 100)
        _ = try client.waitForEvent { if case .jobDone(let body) = $0 { body.job == job.job } else { false } }
        guard case .ok = try submit(client, seed: job.job == 3 ? 5 : 3) else { Issue.record("still busy after a job finished"); return }
    }

    /// One song may have at most 64 analyses queued or running, whoever asks: parameters are
    /// continuous, and one client resubmitting one song with ever new values had given it
    /// 74,000 jobs, each result then reading them all on the coordinator's loop (attack round 7).
    @Test func aSongWithAsManyActiveJobsAsAllowedIsBusyForMore() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path)
        defer { running.stop() }
        let client = try TestClient(running)
        let audio = try testSong()
        func submit(minBPM: Double) throws -> ClientReply.Outcome {
            let params = ["fake": ParameterSet(["min_bpm": .number(minBPM)])]
            return try client.request(.submit(SubmitRequest(name: "song.wav", detectors: ["fake"], params: params), audio: audio))
        }
        for index in 0..<64 {
            guard case .ok = try submit(minBPM: 40 + Double(index) / 8) else { Issue.record("job \(index + 1) of 64 refused"); return }
        }
        guard case .error(let busy) = try submit(minBPM: 30) else { Issue.record("a 65th active job was accepted"); return }
        #expect(busy.code == .busy && busy.message.contains("the most one song may have is 64"), "\(busy)")
        #expect((busy.retryAfterMs ?? 0) > 0)
    }

    @Test func aResultOverTheLimitFailsTheJobWithTooLarge() throws {
        let directory = try TemporaryDirectory()
        let running = try RunningCoordinator(directory: directory.path) { $0.maxResultBytes = 200 }
        defer { running.stop() }
        let client = try TestClient(running)
        let worker = try TestWorker(running, id: "w1")
        guard let submitted = try client.request(
            .submit(SubmitRequest(name: "song.wav", detectors: ["fake"]), audio: try testSong())).answer(SubmitCommand.self)
        else { Issue.record("submit refused"); return }
        let (job, _) = try #require(try worker.nextJob())
        try worker.finish(job, bpm: 120)
        let failed = try client.waitForEvent { if case .jobFailed(let body) = $0 { body.job == job.job } else { false } }
        guard case .jobFailed(let body)? = failed else { Issue.record("no job.failed"); return }
        #expect(body.error.code == .tooLarge)
        #expect(body.error.message.contains("limit of 200 bytes"))
        guard let status = try client.request(.status(StatusRequest(song: submitted.song))).answer(StatusCommand.self) else {
            Issue.record("status refused"); return
        }
        #expect(status.jobs.first?.state == .failed)
        // The worker is free for the next job.
        #expect(try worker.nextJob(timeout: .milliseconds(200)) == nil)
    }
}
