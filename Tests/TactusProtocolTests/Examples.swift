import TactusDetector
import TactusProtocol

/// Realistic values of every body, shared by the round-trip tests and the schema examples.
enum Examples {
    static let song = String(repeating: "3f9a", count: 16)

    static let descriptor = DetectorDescriptor(
        name: "comb-filter", version: "1.0.0", summary: "Scheirer's comb filter bank",
        specific: [
            ParameterSpec("bands", .integer(1...12), default: .number(6), presets: ["classic": .number(6)], summary: "sub-bands"),
            ParameterSpec(
                "band_edges", .increasingNumbers(range: 0...22050, count: 2...13), default: .numbers([0, 200, 400, 800]),
                summary: "band edges in Hz"),
            ParameterSpec("smoothing", .number(0...1), default: .number(0.5), summary: "envelope smoothing"),
        ])

    static var params: ParameterSet {
        // The descriptor resolves its own defaults.
        (try? descriptor.resolve()) ?? ParameterSet()
    }

    static var analysis: TempoAnalysis {
        TempoAnalysis(
            descriptor: descriptor, params: params,
            output: DetectorOutput(
                bpm: 128.02, confidence: 0.83,
                candidates: [TempoCandidate(bpm: 128.02, strength: 1), TempoCandidate(bpm: 64.01, strength: 0.42)],
                windows: [
                    AnalysisWindow(startS: 0, durationS: 5.9, energy: 0.012, bpm: 127.9, strength: 0.7),
                    AnalysisWindow(startS: 2.95, durationS: 5.9, energy: 0.0004, bpm: nil, strength: 0),
                ]),
            seconds: 0.41)
    }

    static var consensus: ConsensusTempo { Consensus.of([analysis]) }

    static let error = ErrorBody(code: .busy, message: "the queue is full (10000 jobs)", retryAfterMs: 1500)

    static var jobs: [JobInfo] {
        [
            JobInfo(job: 41, song: song, detector: "comb-filter", state: .done, attempt: 1),
            JobInfo(job: 42, song: song, detector: "autocorrelation", state: .queued),
            JobInfo(
                job: 43, song: song, detector: "statistical-energy", state: .failed, attempt: 3,
                error: ErrorBody(code: .workerLost, message: "the worker died on all 3 attempts")),
        ]
    }

    static let envelope: [Float] = [0, 0.25, 1e-6, 0.5, 3.5e-3]
    static let audio: [UInt8] = Array("RIFF....WAVEfmt ".utf8) + (0..<200).map { UInt8($0) }

    static var requests: [ClientRequest] {
        [
            ClientRequest(requestID: Array("r1".utf8), .submit(
                SubmitRequest(name: "song.wav", detectors: ["comb-filter"], params: ["comb-filter": ParameterSet(["bands": .number(8)])], force: true),
                audio: audio)),
            ClientRequest(.submit(SubmitRequest(path: "/music/a b/song.flac"), audio: nil)),
            ClientRequest(requestID: [0, 255, 7], .status(StatusRequest(job: 42))),
            ClientRequest(.status(StatusRequest(song: song))),
            ClientRequest(.status(StatusRequest())),
            ClientRequest(.result(ResultRequest(song: song, detectors: ["comb-filter"], windows: true, envelope: true))),
            ClientRequest(.query(QueryRequest(minBpm: 120, maxBpm: 130, detector: "comb-filter", minConfidence: 0.5, limit: 100, offset: 0))),
            ClientRequest(.compare(CompareRequest(songs: [song], detectors: ["comb-filter", "autocorrelation"]))),
            ClientRequest(.playlist(PlaylistRequest(minBpm: 160, maxBpm: 170, count: 20, octave: true))),
            ClientRequest(.truth(TruthRequest(song: song, bpm: 128))),
            ClientRequest(.truth(TruthRequest(song: song))),
            ClientRequest(.detectors),
            ClientRequest(.cancel(CancelRequest(song: song))),
        ]
    }

    static var responses: [ClientReply.Response] {
        [
            .submit(SubmitResponse(song: song, jobs: jobs)),
            .status(StatusResponse(jobs: [jobs[1]])),
            .status(StatusResponse(jobs: [], server: ServerStatus(
                queue: ["comb-filter": 3, "autocorrelation": 0],
                workers: [WorkerInfo(workerId: "host-123-ab12", detector: "comb-filter", version: "1.0.0", job: 41),
                          WorkerInfo(workerId: "host-124-cd34", detector: "autocorrelation", version: "1.2.0")],
                jobsPerSecond: 3.5, uptimeS: 3600.25, accepting: true))),
            .result(ResultResponse(
                song: song, name: "song.wav", durationS: 181.5, analyses: [analysis], pending: ["autocorrelation"],
                consensus: consensus, envelopeHopS: 0.0232), envelope: envelope),
            .result(ResultResponse(song: song, analyses: [], consensus: ConsensusTempo(bpm: nil, detectors: [])), envelope: nil),
            .query(SongList(songs: [SongMatch(song: song, name: "song.wav", bpm: 128.02, confidence: 0.83, detector: "comb-filter")])),
            .compare(CompareResponse(
                songs: [SongComparison(
                    song: song, name: "song.wav", truthBpm: 128,
                    detectors: ["comb-filter": DetectorVerdict(bpm: 128.02, confidence: 0.83, acc1: true, acc2: true)],
                    consensus: consensus)],
                summary: ["comb-filter": DetectorScore(songs: 1, acc1: 1, acc2: 1)])),
            .playlist(SongList(songs: [SongMatch(song: song, bpm: 85, detector: nil)])),
            .truth(TruthResponse(song: song, bpm: 128)),
            .detectors(DetectorsResponse(detectors: [OfferedDetector(detector: DetectorInfo(descriptor), workers: 2, queued: 5)])),
            .cancel(CancelResponse(cancelled: [42, 43])),
        ]
    }

    static var ready: ReadyBody {
        ReadyBody(workerId: "host-123-ab12", detector: DetectorInfo(descriptor), params: params)
    }

    static var job: JobBody {
        JobBody(job: 41, attempt: 2, song: song, name: "song.wav", params: params, timeLimitS: 600, envelope: true)
    }

    static var workerMessages: [WorkerMessage] {
        [
            .ready(ready),
            .result(ResultBody(job: 41, attempt: 2, analysis: analysis,
                audio: AudioFacts(format: "wav", durationS: 181.5, sampleRate: 44100, channels: 2), envelopeHopS: 0.0232),
                envelope: envelope),
            .result(ResultBody(job: 41, attempt: 2, analysis: analysis, audio: nil), envelope: nil),
            .result(ResultBody(job: 41, attempt: 1, error: ErrorBody(code: .corrupt, message: "song.wav: bad chunk at byte 44")), envelope: nil),
            .heartbeat,
            .disconnect(DisconnectBody(reason: "shutting down")),
        ]
    }

    static var coordinatorMessages: [CoordinatorMessage] {
        [
            .job(job, audio: audio),
            .heartbeat,
            .disconnect(DisconnectBody(error: ProtocolError.unsupportedVersion(received: "TACTUS2", supported: ["TACTUS1"]).body)),
            .disconnect(DisconnectBody()),
        ]
    }

    static var events: [Event] {
        [
            .jobDone(JobDoneEvent(job: 41, song: song, detector: "comb-filter", bpm: 128.02, confidence: 0.83)),
            .jobDone(JobDoneEvent(job: 41, song: song, detector: "comb-filter", bpm: nil, confidence: 0)),
            .jobFailed(JobFailedEvent(job: 43, song: song, detector: "statistical-energy", attempts: 3,
                error: ErrorBody(code: .workerLost, message: "the worker died on all 3 attempts"))),
            .songDone(SongDoneEvent(song: song, jobs: jobs, consensus: consensus)),
            .workerJoined(WorkerEvent(workerId: "host-123-ab12", detector: "comb-filter", version: "1.0.0")),
            .workerLost(WorkerEvent(workerId: "host-123-ab12", detector: "comb-filter", version: "1.0.0", reason: "silent")),
        ]
    }
}
