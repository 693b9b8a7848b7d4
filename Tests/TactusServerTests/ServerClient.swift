import Foundation
import TactusCoordinator
import TactusModel
import TactusProtocol
import TactusTestSupport
import TactusZMQ

struct ServerTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A client of the server: requests on a DEALER, events on a SUB.
final class ServerClient {
    let context: ZMQContext
    let socket: ZMQSocket
    let events: ZMQSocket
    private var counter = 0

    /// Connects to the server; with `curve`, over CURVE with those keys.
    init(_ endpoints: ServeProcess.Endpoints, curve: CurveClientKeys? = nil) throws {
        context = try ZMQContext(socketLinger: .zero)
        socket = try context.socket(.dealer)
        if let curve { try socket.set(curve.socketOptions) }
        try socket.connect(endpoints.frontend)
        events = try context.socket(.sub)
        if let curve { try events.set(curve.socketOptions) }
        try events.set(.subscribe([]))
        try events.connect(endpoints.events)
    }

    func request(_ body: ClientRequest.Body, timeout: Duration = .seconds(20)) throws -> ClientReply.Outcome {
        counter += 1
        let id = Array("e\(counter)".utf8)
        // Not queued (no connection: a refused CURVE handshake) is as good as unanswered.
        guard try socket.trySend(try ClientRequest(requestID: id, body).frames()),
            let frames = try socket.receive(timeout: timeout)
        else { throw ServerTestError("no answer to \(body.command)") }
        let reply = try ClientReply(frames: frames)
        guard reply.requestID == id else { throw ServerTestError("answer to another request") }
        return reply.outcome
    }

    /// Submits a song: in one message up to 1 MiB (the largest frame the server takes), otherwise
    /// as an upload in chunks (SPEC section 3.9).
    func submit(_ bytes: [UInt8], name: String, detectors: [String]? = nil) throws -> ClientReply.Outcome {
        guard bytes.count > ProtocolLimits.maxRequestFrameBytes else {
            return try request(.submit(SubmitRequest(name: name, detectors: detectors), audio: bytes))
        }
        let uploaded = try upload(bytes)
        guard let status = uploaded.answer(UploadCommand.self) else { return uploaded }
        return try request(.submit(SubmitRequest(name: name, detectors: detectors, upload: status.upload), audio: nil), timeout: .seconds(60))
    }

    /// Asks for the cadence of a recording: in one message up to 1 MiB, otherwise as an upload.
    func cadence(_ bytes: [UInt8], name: String, timeout: Duration = .seconds(20)) throws -> ClientReply.Outcome {
        guard bytes.count > ProtocolLimits.maxRequestFrameBytes else {
            return try request(.cadence(CadenceRequest(name: name), recording: bytes), timeout: timeout)
        }
        let uploaded = try upload(bytes)
        guard let status = uploaded.answer(UploadCommand.self) else { return uploaded }
        return try request(.cadence(CadenceRequest(name: name, upload: status.upload), recording: nil), timeout: timeout)
    }

    /// Uploads `bytes` in chunks; the last answer (the upload complete, or the refusal).
    func upload(_ bytes: [UInt8]) throws -> ClientReply.Outcome {
        let begin = UploadRequest.begin(size: Int64(bytes.count), sha256: SongID(hashing: bytes))
        var outcome = try request(.upload(begin, chunk: nil))
        while let status = outcome.answer(UploadCommand.self), status.received < status.size {
            let start = Int(status.received), end = min(Int(status.received) + status.chunkBytes, bytes.count)
            outcome = try request(.upload(.chunk(status.upload, offset: status.received), chunk: Array(bytes[start..<end])))
        }
        return outcome
    }

    /// Waits (at most `timeout`) until `count` workers have joined; returns how many there are.
    func waitForWorkers(_ count: Int, timeout: Duration = .seconds(60)) throws -> Int {
        let deadline = ContinuousClock.now + timeout
        var workers = 0
        while ContinuousClock.now < deadline {
            workers = try serverStatus().workers.count
            if workers == count { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return workers
    }

    /// The server's own status (queue, workers).
    func serverStatus() throws -> ServerStatus {
        guard let status = try request(.status(StatusRequest())).answer(StatusCommand.self), let server = status.server else {
            throw ServerTestError("no server status")
        }
        return server
    }

    /// The jobs of `song`.
    func jobs(of song: SongID) throws -> [JobInfo] {
        guard let status = try request(.status(StatusRequest(song: song))).answer(StatusCommand.self) else {
            throw ServerTestError("no status for song \(song)")
        }
        return status.jobs
    }

    /// Waits until no job of any song in `songs` is queued or running; returns the songs
    /// that finished in time.
    func waitForSongs(_ songs: Set<SongID>, timeout: Duration) throws -> Set<SongID> {
        var finished = Set<SongID>()
        let deadline = ContinuousClock.now + timeout
        while finished.count < songs.count && ContinuousClock.now < deadline {
            for song in songs.subtracting(finished) {
                let jobs = try self.jobs(of: song)
                if !jobs.isEmpty && jobs.allSatisfy({ $0.state != .queued && $0.state != .running }) {
                    finished.insert(song)
                }
            }
            if finished.count < songs.count { Thread.sleep(forTimeInterval: 0.25) }
        }
        return finished
    }
}

/// The answer of an accepted submission; a refusal is an error.
func submitted(_ outcome: ClientReply.Outcome) throws -> SubmitResponse {
    guard let response = outcome.answer(SubmitCommand.self) else { throw ServerTestError("submit refused: \(outcome)") }
    return response
}

/// A key pair written by `tactus keys generate NAME --out DIRECTORY --json`.
struct GeneratedKeys: Decodable {
    var name: String
    var public_key: String
    var public_file: String
    var secret_file: String

    /// Runs `tactus keys generate`; throws with its standard error when it fails.
    static func generate(_ name: String, in directory: String) throws -> GeneratedKeys {
        let result = try CLI.run(["keys", "generate", name, "--out", directory, "--json"])
        guard result.status == 0 else { throw ServerTestError("keys generate failed: \(result.standardError)") }
        return try JSONDecoder().decode(GeneratedKeys.self, from: Data(result.standardOutput.utf8))
    }
}
