import TactusDetector
import TactusModel
import TactusProtocol

/// The seed corpus: one valid message of each kind, encoded by the protocol's own encoder.
enum ProtocolSeeds {
    /// The song of every seed (64 hex digits: a valid id); requests name it by its hex.
    static let song = SongID(String(repeating: "3f9a", count: 16))!

    static func all() throws -> [(name: String, frames: [[UInt8]])] {
        let descriptor = DetectorDescriptor(
            name: "comb-filter", version: "1.0.0", summary: "comb filter bank",
            specific: [ParameterSpec("bands", .integer(1...12), default: .number(6), summary: "sub-bands")])
        let params = try descriptor.resolve()
        let analysis = TempoAnalysis(
            descriptor: descriptor, params: params,
            output: DetectorOutput(
                bpm: 128.5, confidence: 0.8, candidates: [TempoCandidate(bpm: 128.5, strength: 1)],
                windows: [AnalysisWindow(startS: 0, durationS: 6, energy: 0.01, bpm: 128, strength: 0.7)]),
            seconds: 0.4)
        let audio: [UInt8] = Array("RIFF\u{24}\0\0\0WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 24)
        let job = JobInfo(job: 41, song: song, detector: "comb-filter", state: .done, attempt: 1)
        let failure = ErrorBody(code: .busy, message: "the queue is full", retryAfterMs: 1500)

        var seeds: [(String, [[UInt8]])] = []
        let requests: [(String, ClientRequest.Body)] = [
            ("submit", .submit(SubmitRequest(name: "a.wav", detectors: ["comb-filter"], params: ["comb-filter": ParameterSet(["bands": .number(8)])]), audio: audio)),
            ("submit-path", .submit(SubmitRequest(path: "/music/a.flac"), audio: nil)),
            ("status-job", .status(StatusRequest(job: 42))),
            ("status-server", .status(StatusRequest())),
            ("result", .result(ResultRequest(song: song, detectors: ["comb-filter"], windows: true, envelope: true))),
            ("query", .query(QueryRequest(minBpm: 120, maxBpm: 130, detector: "comb-filter", octave: true, limit: 5))),
            ("compare", .compare(CompareRequest(song: song))),
            ("playlist", .playlist(PlaylistQuery(profile: "10m@150,5m@170"))),
            ("truth", .truth(TruthRequest(song: song, bpm: 128))),
            ("detectors", .detectors),
            ("cancel", .cancel(CancelRequest(song: song))),
            ("resolve", .resolve(ResolveRequest(names: ["dev_039.mp3", "/music/a b/c.flac", String(song.hex.prefix(8))]))),
            ("tags", .tags(TagsRequest(action: "write", all: true, offset: 16, limit: 16, minConfidence: 0.4, dryRun: true))),
            ("upload-begin", .upload(.begin(size: 52_428_800, sha256: song), chunk: nil)),
            ("upload-chunk", .upload(.chunk("0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90", offset: 1 << 20), chunk: audio)),
            ("submit-upload", .submit(SubmitRequest(name: "a.flac", upload: "0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90"), audio: nil)),
        ]
        for (name, body) in requests {
            let request = ClientRequest(requestID: Array("r1".utf8), body)
            seeds.append(("request-\(name)", try request.frames()))
            seeds.append(("routed-request-\(name)", [[0, 0x80, 0, 0x41, 0xA7]] + (try request.frames(delimited: true))))
        }
        let replies: [(String, ClientReply)] = [
            ("submit", ClientReply(requestID: [1], .submit(SubmitResponse(song: song, jobs: [job])))),
            ("status", ClientReply(requestID: [], .status(StatusResponse(jobs: [job])))),
            ("result", ClientReply(requestID: [2], .result(ResultResponse(
                song: song, analyses: [analysis], consensus: ConsensusTempo(bpm: 128.5, detectors: ["comb-filter"]),
                envelopeHopS: 0.02), envelope: [0, 0.5, 1]))),
            ("cancel", ClientReply(requestID: [3], .cancel(CancelResponse(cancelled: [41])))),
            ("upload", ClientReply(requestID: [5], .upload(UploadStatus(
                upload: "0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90", size: 52_428_800, received: 1 << 20, chunkBytes: 1 << 20)))),
            ("error", ClientReply(requestID: [4], command: "submit", error: failure)),
        ]
        for (name, reply) in replies { seeds.append(("reply-\(name)", try reply.frames())) }
        let workerMessages: [(String, WorkerMessage)] = [
            ("ready", .ready(ReadyBody(workerId: "host-1-ab", detector: DetectorInfo(descriptor), params: params))),
            ("result", .result(ResultBody(
                job: 41, attempt: 1, analysis: analysis, audio: AudioFacts(format: "wav", durationS: 6, sampleRate: 22050, channels: 1),
                envelopeHopS: 0.02), envelope: [0.1, 0.2])),
            ("result-error", .result(ResultBody(job: 41, attempt: 1, error: ErrorBody(code: .corrupt, message: "bad")), envelope: nil)),
            ("heartbeat", .heartbeat),
            ("disconnect", .disconnect(DisconnectBody(reason: "leaving"))),
            ("offer", .offer(OfferBody(workerId: "host-1-ab", detectors: [DetectorOffer(detector: DetectorInfo(descriptor), params: params)]))),
            ("song-result", .songResult(SongResultBody(
                song: song, audio: AudioFacts(format: "wav", durationS: 6, sampleRate: 22050, channels: 1), envelopeHopS: 0.02,
                results: [SongJobAnswer(job: 41, attempt: 1, analysis: analysis),
                          SongJobAnswer(job: 42, attempt: 2, error: ErrorBody(code: .invalidParameter, message: "bad"))]),
                envelope: [0.1, 0.2])),
            ("identified", .identified(IdentifiedBody(request: 3, files: [
                FileIdentity(sha256: song, size: 10_912_345, mtimeNs: 1_764_100_000_123_456_789),
                FileIdentity(error: ErrorBody(code: .notFound, message: "gone"))]))),
        ]
        for (name, message) in workerMessages { seeds.append(("worker-\(name)", try message.frames())) }
        let coordinatorMessages: [(String, CoordinatorMessage)] = [
            ("job", .job(JobBody(job: 41, attempt: 1, song: song, name: "a.wav", params: params, timeLimitS: 600, envelope: true), audio: audio)),
            ("song-job", .songJob(SongJobBody(song: song, name: "a.wav", timeLimitS: 600, envelope: true, jobs: [
                SongJobEntry(job: 41, attempt: 1, detector: descriptor.name, params: params),
                SongJobEntry(job: 42, attempt: 2, detector: "comb-filter", params: params)]), audio: audio)),
            ("identify", .identify(IdentifyBody(request: 3, files: [JobLocation(root: "/music", path: "A/b.flac")]))),
            ("heartbeat", .heartbeat),
            ("disconnect", .disconnect(DisconnectBody(reason: "refused", error: ErrorBody(code: .badRequest, message: "send READY first")))),
        ]
        for (name, message) in coordinatorMessages { seeds.append(("coordinator-\(name)", try message.frames())) }
        let events: [(String, Event)] = [
            ("job-done", .jobDone(JobDoneEvent(job: 41, song: song, detector: "comb-filter", bpm: 128, confidence: 0.8))),
            ("job-failed", .jobFailed(JobFailedEvent(job: 41, song: song, detector: "comb-filter", attempts: 3, error: failure))),
            ("song-done", .songDone(SongDoneEvent(song: song, jobs: [job], consensus: ConsensusTempo(bpm: 128, detectors: ["comb-filter"])))),
            ("worker-lost", .workerLost(WorkerEvent(workerId: "host-1-ab", detector: "comb-filter", version: "1.0.0", reason: "silent"))),
        ]
        for (name, event) in events { seeds.append(("event-\(name)", try event.frames())) }
        return seeds
    }
}
