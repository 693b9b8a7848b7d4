import Foundation
import TactusAudio
import TactusDetector
import TactusProtocol
import TactusTestSupport
import TactusZMQ
import Testing

/// `tactus keys generate`, `tactus serve` with CURVE (its local workers included), SIGHUP
/// reloading the authorized keys, and the refusal to listen beyond loopback without CURVE.
@Suite(.serialized) struct SecurityServerTests {
    /// Runs `tactus ARGUMENTS` to its end; returns its status, standard output and error.
    private func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let result = try CLI.run(arguments)
        return (result.status, result.standardOutput, result.standardError)
    }

    @Test func keysGenerateWritesACertificatePairReadableBack() throws {
        let directory = try TemporaryDirectory()
        let generated = try GeneratedKeys.generate("alice", in: directory.path + "/keys")
        #expect(generated.public_file == directory.path + "/keys/alice.key")
        #expect(generated.secret_file == directory.path + "/keys/alice.key_secret")
        let pair = try CurveCertificate(contentsOf: generated.secret_file).keyPair
        #expect(pair.publicKey.z85 == generated.public_key)
        #expect(try CurveCertificate(contentsOf: generated.public_file).publicKey == pair.publicKey)
        let mode = try FileManager.default.attributesOfItem(atPath: generated.secret_file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A second pair of the same name is refused, and the first stays.
        let again = try run(["keys", "generate", "alice", "--out", directory.path + "/keys"])
        #expect(again.status == 1 && again.error.contains("alice.key_secret"))
        #expect(try CurveCertificate(contentsOf: generated.secret_file).keyPair == pair)
    }

    /// One directory for clients and workers alike would let a client act as a worker: the old
    /// option is refused with the two that replace it.
    @Test func theSingleAuthorizedKeysDirectoryIsRefusedForTheTwoRoles() throws {
        let directory = try TemporaryDirectory()
        let run = try CLI.run([
            "serve", "--data", directory.path, "--curve-secret-key", directory.file("server.key_secret"),
            "--authorized-keys", directory.path,
        ])
        #expect(run.status != 0)
        let message = run.standardError
        #expect(message.contains("--authorized-clients") && message.contains("--authorized-workers"), "\(message)")
    }

    @Test func aCurveServerAdmitsItsLocalWorkersAndNewKeysAfterSIGHUP() throws {
        let directory = try TemporaryDirectory()
        let keys = directory.path + "/keys", authorized = directory.path + "/authorized"
        try FileManager.default.createDirectory(atPath: authorized, withIntermediateDirectories: true)
        let server = try GeneratedKeys.generate("server", in: keys)
        let alice = try GeneratedKeys.generate("alice", in: keys)
        let bob = try GeneratedKeys.generate("bob", in: keys)
        try FileManager.default.copyItem(atPath: alice.public_file, toPath: authorized + "/alice.key")

        let serve = try ServeProcess(
            dataDirectory: directory.path + "/data",
            extraArguments: [
                "--curve-secret-key", server.secret_file, "--authorized-clients", authorized, "--max-worker-memory-mb", "3072",
            ])
        defer { serve.stop() }
        let aliceClient = try ServerClient(
            serve.endpoints, curve: CurveClientKeys(serverKeyFile: server.public_file, secretKeyFile: alice.secret_file))
        // The local worker (one, offering every detector) got in with the key the server made for it.
        var workers = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while workers < 1 && ContinuousClock.now < deadline {
            guard let status = try aliceClient.request(.status(StatusRequest())).answer(StatusCommand.self) else {
                throw ServerTestError("status refused")
            }
            workers = status.server?.workers.count ?? 0
            if workers < 1 { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(workers == 1)
        // Each runs under the memory limit serve passed on (its own size once ready plus
        // 3072 MiB for jobs), and analyses songs within it.
        #expect(serve.workerProcessIDs.count == 1)
        for pid in serve.workerProcessIDs {
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            let line = limits.split(separator: "\n").first { $0.hasPrefix("Max address space") }
            let bytes = line.flatMap { $0.split(separator: " ").compactMap { Int($0) }.first }
            #expect(bytes.map { $0 > 3072 << 20 && $0 < 4096 << 20 } == true, "\(line ?? "no address-space line")")
        }

        let signal = Synth.drumPattern(bpm: 124, seconds: 12, sampleRate: 22050)
        guard let submitted = try aliceClient.submit(
            try AudioFileWriter(.wav16).encode([signal], sampleRate: 22050), name: "drums.wav").answer(SubmitCommand.self)
        else { throw ServerTestError("submit refused") }
        #expect(try aliceClient.waitForSongs([submitted.song], timeout: .seconds(30)) == [submitted.song])
        #expect(try aliceClient.jobs(of: submitted.song).allSatisfy { $0.state == .done })

        // The client commands take the keys from options or from the environment.
        let status = try CLI.run(
            ["status", "--server", serve.endpoints.frontend, "--json"],
            environment: ["TACTUS_CURVE_SERVER_KEY": server.public_file, "TACTUS_CURVE_SECRET_KEY": alice.secret_file])
        #expect(status.status == 0, "\(status.standardError)")
        let refused = try CLI.run([
            "status", "--server", serve.endpoints.frontend, "--timeout", "0.3",
            "--curve-server-key", server.public_file, "--curve-secret-key", bob.secret_file,
        ])
        #expect(refused.status == 1 && refused.standardError.contains("does not admit this client's key"), "\(refused.standardError)")

        let bobClient = try ServerClient(
            serve.endpoints, curve: CurveClientKeys(serverKeyFile: server.public_file, secretKeyFile: bob.secret_file))
        #expect(throws: ServerTestError.self) { _ = try bobClient.request(.status(StatusRequest()), timeout: .milliseconds(700)) }

        try FileManager.default.copyItem(atPath: bob.public_file, toPath: authorized + "/bob.key")
        kill(serve.process.processIdentifier, SIGHUP)
        // A refused connection is closed for good (libzmq does not retry a failed handshake):
        // bob connects again, as a client does after a timeout, and gets in.
        var answered = false
        let reloadDeadline = ContinuousClock.now + .seconds(10)
        while !answered && ContinuousClock.now < reloadDeadline {
            let again = try ServerClient(
                serve.endpoints, curve: CurveClientKeys(serverKeyFile: server.public_file, secretKeyFile: bob.secret_file))
            answered = (try? again.request(.status(StatusRequest()), timeout: .milliseconds(500))) != nil
        }
        #expect(answered)
        #expect(serve.process.isRunning)
    }

    @Test func listeningBeyondLoopbackWithoutCurveNeedsInsecure() throws {
        let directory = try TemporaryDirectory()
        let arguments = [
            "serve", "--data", directory.path, "--no-local-workers", "--no-web", "--json", "--frontend", "tcp://0.0.0.0:*",
            "--backend", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
        ]
        let refused = try run(arguments)
        #expect(refused.status == 1)
        #expect(refused.error.contains("refusing to listen on tcp://0.0.0.0:* without CURVE"))

        let insecure = try ServeProcess(dataDirectory: directory.path, workersPerDetector: 1, extraArguments: [
            "--no-local-workers", "--frontend", "tcp://0.0.0.0:*", "--insecure", "--log-level", "warning",
        ], captureErrors: true)
        #expect(insecure.endpoints.frontend.hasPrefix("tcp://0.0.0.0:"))
        #expect(insecure.stop() == 0)
        #expect(insecure.errors.contains("INSECURE"))
    }

    @Test(.enabled(if: pythonCanImportZMQ, "python3 with pyzmq and numpy (make deps installs them)"))
    func thePythonExamplesTalkCurveWithKeysFromTactusKeysGenerate() throws {
        let directory = try TemporaryDirectory()
        let keys = directory.path + "/keys", authorized = directory.path + "/authorized", songs = directory.path + "/songs"
        let server = try GeneratedKeys.generate("server", in: keys)
        let client = try GeneratedKeys.generate("py", in: authorized)
        let worker = try GeneratedKeys.generate("py-worker", in: directory.path + "/authorized-workers")
        let stranger = try GeneratedKeys.generate("stranger", in: keys)
        try FileManager.default.createDirectory(atPath: songs, withIntermediateDirectories: true)
        let signal = Synth.clickTrack(bpm: 120, seconds: 8, sampleRate: 22050)
        try AudioFileWriter(.wav16).write([signal], sampleRate: 22050, to: songs + "/click.wav")

        let serve = try ServeProcess(
            dataDirectory: directory.path + "/data",
            extraArguments: [
                "--curve-secret-key", server.secret_file, "--authorized-clients", authorized,
                "--authorized-workers", directory.path + "/authorized-workers",
            ])
        defer { serve.stop() }
        let examples = CLI.repositoryRoot + "/protocol/examples/"
        // The example worker over CURVE with an authorized key, and one whose key is not.
        let admitted = try PythonProcess(examples + "worker.py", [
            "--connect", serve.endpoints.backend, "--id", "admitted",
            "--curve-server-key", server.public_file, "--curve-secret-key", worker.secret_file,
        ])
        defer { admitted.stop() }
        let refused = try PythonProcess(examples + "worker.py", [
            "--connect", serve.endpoints.backend, "--id", "refused",
            "--curve-server-key", server.public_file, "--curve-secret-key", stranger.secret_file,
        ])
        defer { refused.stop() }
        let status = try ServerClient(
            serve.endpoints, curve: CurveClientKeys(serverKeyFile: server.public_file, secretKeyFile: client.secret_file))
        var workers: [String] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let answer = try status.request(.status(StatusRequest())).answer(StatusCommand.self) else { throw ServerTestError("no status") }
            workers = answer.server?.workers.map(\.workerId) ?? []
            if workers.contains("admitted") { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(workers.contains("admitted"), "worker log:\n\(admitted.log)")

        let run = try CLI.runProgram("/usr/bin/env", [
            "python3", examples + "client.py", songs, "--server", serve.endpoints.frontend, "--events", serve.endpoints.events,
            "--json", "--timeout", "10", "--curve-server-key", server.public_file, "--curve-secret-key", client.secret_file,
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let line = try #require(run.jsonLines.first)
        #expect((line["consensus"] as? [String: Any])?["bpm"] as? Double != nil)
        let analyses = try #require(line["analyses"] as? [[String: Any]])
        let onset = try #require(analyses.first { $0["detector"] as? String == "python-onset" }, "worker log:\n\(admitted.log)")
        #expect(TempoRelation.acc2(onset["bpm"] as? Double, 120))
        // The stranger never got in: its handshake was refused, so it never became a worker.
        guard let answer = try status.request(.status(StatusRequest())).answer(StatusCommand.self) else { throw ServerTestError("no status") }
        #expect(answer.server?.workers.map(\.workerId).contains("refused") == false)
    }
}

/// Whether `python3` can import pyzmq and numpy (the example worker needs both).
private let pythonCanImportZMQ: Bool = {
    (try? CLI.runProgram("/usr/bin/env", ["python3", "-c", "import zmq, zmq.auth, numpy"]).status) == 0
}()
