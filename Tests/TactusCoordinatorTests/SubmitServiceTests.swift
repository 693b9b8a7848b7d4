import Foundation
import Logging
import TactusAudioProbe
import TactusDetector
import TactusModel
import TactusProtocol
import TactusTestSupport
import Testing
@testable import TactusCoordinator

/// The submit service on its own, without a coordinator's loop or sockets: what it refuses from
/// its own checks, and what it hands the queue for a song it takes (hashed and probed on a real
/// intake thread, its blob stored in a real library's folder).
@Suite struct SubmitServiceTests {
    /// A queue that keeps what it is given, in the library's place: the loop's own queueing is
    /// tested with the coordinator.
    final class KeptQueue: SubmissionQueue {
        var accepting = true
        let intake: BackgroundWork
        var queued: [(prepared: PreparedSubmission, client: String)] = []

        init() throws { intake = try BackgroundWork(threads: 1, name: "test-intake") }

        func detectors(_ names: [String]?) throws(ErrorBody) -> [SubmissionIntake.Detector] {
            Set(names ?? ["fake"]).sorted().map { SubmissionIntake.Detector(name: $0, descriptor: nil) }
        }

        func queue(_ prepared: PreparedSubmission, client: String) throws -> SubmitResponse {
            queued.append((prepared, client))
            return SubmitResponse(song: prepared.song.id, jobs: [])
        }
    }

    let directory: TemporaryDirectory
    let coordinator: Coordinator
    let uploads: UploadService
    let service: SubmitService
    let queue: KeptQueue

    init() throws {
        directory = try TemporaryDirectory(prefix: "tactus-submit-service")
        var configuration = CoordinatorConfiguration(
            dataDirectory: directory.path, frontend: "tcp://127.0.0.1:*", backend: "tcp://127.0.0.1:*",
            events: "tcp://127.0.0.1:*", knownDetectors: [])
        configuration.maxInlineSongBytes = 300_000
        coordinator = try Coordinator(configuration: configuration, probe: AudioProbe(), logger: Logger(label: "test"))
        uploads = try UploadService(configuration: configuration, logger: Logger(label: "test"))
        service = SubmitService(coordinator: coordinator, uploads: uploads)
        queue = try KeptQueue()
    }

    /// Submits and returns the answer, delivering the intake thread's work as the loop would.
    func submit(_ request: SubmitRequest, audio: [UInt8]?, client: String = "connection:01") throws -> Result<ClientReply.Response, any Error> {
        nonisolated(unsafe) var outcome: Result<ClientReply.Response, any Error>?
        service.begin(request, audio: audio, client: client, queue: queue) { outcome = $0 }
        return try Wait.value("the service's answer", timeout: .seconds(20)) {
            queue.intake.deliverIfFinished()
            return outcome
        }
    }

    /// The error code the loop would answer with.
    func code(_ outcome: Result<ClientReply.Response, any Error>) -> ErrorCode? {
        CoordinatorLoop.reply(to: [], command: "submit", outcome, logger: Logger(label: "test")).outcome.errorCode
    }

    @Test func aSongItTakesIsHashedProbedStoredAndHandedToTheQueue() throws {
        let song = try testSong(seed: 3)
        let answer = try submit(SubmitRequest(name: "three.wav", detectors: ["fake", "other"]), audio: song, client: "key:abc").get()
        let id = SongID(hashing: song)
        #expect(answer.answer(SubmitCommand.self)?.song == id)
        let handed = try #require(queue.queued.first)
        #expect(queue.queued.count == 1 && handed.client == "key:abc")
        #expect(handed.prepared.song.id == id && handed.prepared.song.fileName == "three.wav")
        #expect(abs(handed.prepared.song.durationS - 6) < 0.05 && handed.prepared.song.sampleRate == 22050, "the probe read the header")
        #expect(handed.prepared.requests.map(\.detector) == ["fake", "other"])
        #expect(handed.prepared.createdBlob && coordinator.blobs.contains(id))
        #expect(service.budget.inHand == 0, "the bytes in hand are given back")
    }

    @Test func itRefusesWhatItCanTellAtOnceAndQueuesNothing() throws {
        let song = try testSong(seed: 4)
        // Parameters for a detector the submission does not ask for.
        let stray = SubmitRequest(name: "s.wav", detectors: ["fake"], params: ["other": ParameterSet()])
        #expect(code(try submit(stray, audio: song)) == .badRequest)
        // More bytes than a message may carry.
        #expect(code(try submit(SubmitRequest(name: "big.wav"), audio: [UInt8](repeating: 0, count: 300_001))) == .tooLarge)
        // An upload this client never made.
        #expect(code(try submit(SubmitRequest(name: "u.wav", upload: String(repeating: "a", count: 32)), audio: nil)) == .notFound)
        // Bytes that are no audio: refused on the intake thread, nothing stored.
        #expect(code(try submit(SubmitRequest(name: "noise.txt"), audio: Array("not a song at all".utf8))) == .unsupportedFormat)
        // A stopping server takes no song.
        queue.accepting = false
        #expect(code(try submit(SubmitRequest(name: "late.wav"), audio: song)) == .unavailable)
        #expect(queue.queued.isEmpty)
        #expect(!coordinator.blobs.contains(SongID(hashing: song)))
        #expect(service.budget.inHand == 0)
    }
}
