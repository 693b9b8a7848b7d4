import Foundation
import TactusDetector
import TactusModel
import TactusProtocol

/// Realistic values of every body, shared by the round-trip tests and the schema examples.
enum Examples {
    static let song = SongID(String(repeating: "3f9a", count: 16))!
    static let otherSong = SongID(String(repeating: "0c4e", count: 16))!
    static let thirdSong = SongID(String(repeating: "5b1d", count: 16))!

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
                ],
                // As a beat-tracking detector gives them: the schema's `beats` is checked too.
                beats: BeatPositions(times: [0.47, 0.938, 1.407, 1.876], downbeats: [0.47, 1.876])),
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
            ClientRequest(.query(QueryRequest(
                minBpm: 120, maxBpm: 130, detector: "comb-filter", octave: true, order: "bpm", limit: 50, offset: 100))),
            ClientRequest(.query(QueryRequest(minBpm: 165, maxBpm: 175, agree: 2))),
            ClientRequest(.query(QueryRequest(
                minBpm: 1, maxBpm: 1000, order: "title", descending: true, limit: 50, offset: 50, histogram: 1))),
            ClientRequest(.query(QueryRequest(minBpm: 60, maxBpm: 200, detector: "autocorrelation", order: "confidence", histogram: 5))),
            ClientRequest(.compare(CompareRequest(song: song))),
            ClientRequest(.compare(CompareRequest())),
            ClientRequest(.compare(CompareRequest(binWidth: 5))),
            ClientRequest(.playlist(PlaylistQuery(cadence: 170, minutes: 30, tolerance: 0.03, detector: "autocorrelation"))),
            ClientRequest(.playlist(PlaylistQuery(profile: "10m@150,5m@170,90s@160"))),
            ClientRequest(.playlist(PlaylistQuery(profile: "10m@150,5m@170", tolerance: 0.05, strict: true))),
            ClientRequest(.truth(TruthRequest(song: song, bpm: 128))),
            ClientRequest(.truth(TruthRequest(song: song))),
            ClientRequest(.truthImport(TruthImportRequest(
                source: "csv:tempi.csv",
                references: [TruthReference(song: song, bpm: 128), TruthReference(song: SongID(hashing: [1, 2, 3]), bpm: 87.5)]))),
            ClientRequest(.detectors),
            ClientRequest(.cancel(CancelRequest(song: song))),
            ClientRequest(.cadence(CadenceRequest(name: "TotalAcceleration.csv"), recording: recording)),
            ClientRequest(.cadence(CadenceRequest(name: "half-marathon.csv", upload: upload), recording: nil)),
            ClientRequest(requestID: Array("s1".utf8), .stretch(StretchRequest(song: song, bpm: 170, maxStretchPct: 5))),
            ClientRequest(.stretch(StretchRequest(song: String(song.hex.prefix(8)), bpm: 128.5))),
            ClientRequest(.render(RenderRequest(render: renderStatus.render))),
            ClientRequest(.stretch(StretchRequest(playlist: PlaylistQuery(profile: "10m@150,5m@170", detector: "comb-filter")))),
            ClientRequest(.stretch(StretchRequest(playlist: PlaylistQuery(cadence: 170, minutes: 20), maxStretchPct: 6))),
            ClientRequest(.resolve(ResolveRequest(names: ["dev_039.mp3", "3f9a3f9a", song.hex, "intro.mp3", "/music/gone.flac"]))),
            ClientRequest(.tags(TagsRequest(action: "read", songs: [song.hex, "0c4e0c4e"], replace: true))),
            ClientRequest(.tags(TagsRequest(action: "write", all: true, offset: 32, limit: 16, detector: "comb-filter", minConfidence: 0.4))),
            ClientRequest(.tags(TagsRequest(action: "write", songs: [song.hex], dryRun: true, backup: true))),
            ClientRequest(.scan(ScanRequest())),
            ClientRequest(.scan(ScanRequest(paths: ["/music/Albums/New", "/music/single.flac"]))),
            ClientRequest(.prune(PruneRequest(dryRun: true))),
            ClientRequest(.prune(PruneRequest())),
            ClientRequest(requestID: Array("u1".utf8), .upload(.begin(size: Int64(audio.count), sha256: song), chunk: nil)),
            ClientRequest(.upload(.chunk(upload, offset: 1 << 20), chunk: Array(audio.prefix(16)))),
            ClientRequest(.submit(SubmitRequest(name: "concert.flac", detectors: ["comb-filter"], upload: upload), audio: nil)),
        ]
    }

    /// An upload's id, as the coordinator makes them.
    static let upload = "0f8e4a52-7c1d-4f0e-9b53-2d4c8e1f6a90"

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
            .result(ResultResponse(
                song: song, name: "song.flac", analyses: [analysis], consensus: consensus,
                locations: [
                    SongLocation(root: "/music", path: "Albums/A/song.flac", byteSize: 31_337_000, mtimeNs: 1_763_900_000_123_456_789),
                    SongLocation(root: "/music", path: "old/song.flac", byteSize: 31_337_000, mtimeNs: 1_700_000_000_000_000_000, missing: true),
                ]), envelope: nil),
            .query(SongList(songs: [consensusMatch, halfTimeMatch])),
            .query(SongList(songs: [])),
            .query(SongList(
                songs: [consensusMatch],
                histogram: TempoHistogram(total: 3, bins: [
                    LibraryComparison.Bin(lower: 127, width: 1, count: 2), LibraryComparison.Bin(lower: 128, width: 1, count: 0),
                    LibraryComparison.Bin(lower: 129, width: 1, count: 1),
                ]))),
            .query(SongList(songs: [], histogram: TempoHistogram(total: 0, bins: []))),
            .compare(CompareResponse(song: songComparison)),
            .compare(CompareResponse(song: bareSongComparison)),
            .compare(CompareResponse(library: libraryComparison)),
            .playlist(PlaylistResponse(playlist: playlist)),
            .truth(TruthResponse(song: song, reference: reference)),
            .truth(TruthResponse(song: song, reference: nil)),
            .truthImport(TruthImportResponse(imported: 2)),
            .detectors(DetectorsResponse(detectors: [OfferedDetector(detector: DetectorInfo(descriptor), workers: 2, queued: 5)])),
            .cancel(CancelResponse(cancelled: [42, 43])),
            .cadence(cadenceReport),
            .stretch(renderStatus),
            .render(renderDone, wav: audio),
            .render(renderFailed, wav: nil),
            .stretch(playlistRender),
            .render(playlistRenderDone, wav: audio),
            .resolve(resolved),
            .tags(tagReports),
            .scan(ScanSummary(
                new: 12, changed: 1, moved: 2, missing: 1, unchanged: 980, copies: 1,
                skipped: [
                    ScanSkip(path: "/music/cover.jpg", reason: "/music/cover.jpg: 48213 bytes that are not audio Tactus recognises", code: .unsupportedFormat),
                    ScanSkip(path: "/music/latest", reason: "a symbolic link (links below a library root are not followed)"),
                ],
                queuedJobs: 39, files: 997, seconds: 1.25)),
            // `tactus scan --db --json` prints the same body, with the analyses it ran and `failed`.
            {
                var here = ScanSummary(new: 2, unchanged: 40, queuedJobs: 6, files: 43, seconds: 9.5)
                here.failed = [ScanSkip(path: "/music/broken.flac", reason: "/music/broken.flac: the FLAC stream is corrupt", code: .corrupt)]
                return .scan(here)
            }(),
            .prune(PruneSummary(removed: 3, removedBytes: 25_000_000, kept: 1, dryRun: false)),
            .upload(UploadStatus(upload: upload, size: 52_428_800, received: 0, chunkBytes: 1 << 20)),
            .upload(UploadStatus(upload: upload, size: 52_428_800, received: 2 << 20, chunkBytes: 1 << 20)),
        ]
    }

    /// A render of `song` (at 85.1 BPM, served at double time) at 170 BPM, as it starts.
    static var renderStatus: RenderStatus {
        RenderStatus(
            render: RenderStatus.id(song: song, bpm: 170), song: song, sourceBPM: 85.1, factor: 2, targetBPM: 170,
            tempoRatio: 170 / 170.2, state: .pending)
    }

    /// A playlist of two songs (the second at double time) rendered at 150 and 170 steps per minute, as it starts.
    static var playlistRender: RenderStatus {
        let songs = [
            RenderedSong(song: song, sourceBPM: 152.3, targetBPM: 150),
            RenderedSong(song: SongID(String(repeating: "7c", count: 32))!, sourceBPM: 168.4, targetBPM: 170),
        ]
        return RenderStatus(render: RenderStatus.id(playlist: songs), songs: songs, state: .pending)
    }

    static var playlistRenderDone: RenderStatus {
        var done = playlistRender
        (done.state, done.bytes, done.durationS, done.renderS) = (.done, audio.count, 914.2, 21.7)
        return done
    }

    static var renderDone: RenderStatus {
        var done = renderStatus
        (done.state, done.bytes, done.durationS, done.renderS) = (.done, audio.count, 181.71, 4.2)
        return done
    }

    static var renderFailed: RenderStatus {
        var failed = renderStatus
        (failed.state, failed.error) = (.failed, ErrorBody(code: .unreadable, message: "song.mp3: corrupt MPEG frame at byte 4410"))
        return failed
    }

    static let recording: [UInt8] = Array("time,seconds_elapsed,z,y,x\n1700000000000000000,0.0,9.81,0.12,-0.3\n".utf8)

    static var cadenceReport: CadenceReport {
        CadenceReport(
            file: "TotalAcceleration.csv", format: .sensorLogger, unit: .metresPerSecondSquared, unitEvidence: .gravity,
            includesGravity: true, samples: 1400, duration: 13.99, sampleRate: 100, cadence: 171.5, stepSeconds: 2,
            windows: [
                CadenceWindow(start: 0, end: 10, status: .steps, cadence: 171.5, confidence: 0.82, movement: 0.41),
                CadenceWindow(start: 2, end: 12, status: .still, cadence: nil, confidence: 0, movement: 0.01),
            ])
    }

    // The library's answers are the store's own types, which only the library builds: these are
    // decoded from the JSON the library's types write (as `tactus query|compare|playlist|truth --json`
    // print it, dates in ISO 8601).

    /// Decodes an example written as JSON; a literal that does not decode is a mistake in this file.
    static func decoded<T: Decodable>(_ type: T.Type, _ json: String) -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(T.self, from: Data(json.utf8))
        } catch {
            fatalError("the example \(T.self) does not decode: \(error)")
        }
    }

    /// A song matched directly by its consensus tempo.
    static var consensusMatch: TempoMatch {
        decoded(TempoMatch.self, """
            {"song": "\(song)", "bpm": 128.02, "factor": 1, "detector": "consensus",
             "detectors": ["autocorrelation", "comb-filter"], "title": "Night Drive", "artist": "Kilo",
             "file": "song.wav", "duration_s": 181.5, "paths": ["/music/Albums/Kilo/song.wav"],
             "beat_grid": {"kind": "constant", "bpm": 128.004, "first_beat_s": 0.214, "clarity": 4.1}}
            """)
    }

    /// A song matched at half the tempo asked for, without tags.
    static var halfTimeMatch: TempoMatch {
        decoded(TempoMatch.self, """
            {"song": "\(otherSong)", "bpm": 85.1, "factor": 0.5, "detector": "comb-filter", "detectors": ["comb-filter"],
             "title": null, "artist": null, "file": "slow.flac", "duration_s": 240}
            """)
    }

    static var reference: ReferenceTempo {
        decoded(ReferenceTempo.self, #"{"song": "\#(song)", "bpm": 128, "source": "csv:tempi.csv", "set_at": "2025-11-19T12:00:00Z"}"#)
    }

    /// A tagged song with a reference tempo, one detector at the octave and one failed.
    static var songComparison: SongComparison {
        decoded(SongComparison.self, """
            {"song": "\(song)", "file": "song.wav", "title": "Night Drive", "artist": "Kilo", "duration_s": 181.5,
             "reference": {"song": "\(song)", "bpm": 128, "source": "manual", "set_at": "2025-11-19T12:00:00Z"},
             "consensus": {"bpm": 128.02, "detectors": ["comb-filter"]}, "consensus_relation": "match",
             "results": [
               {"label": "autocorrelation", "detector": "autocorrelation", "preset": "default", "version": "1.2.0",
                "status": "done", "bpm": 64.01, "confidence": 0.6, "candidates": [{"bpm": 64.01, "strength": 1}],
                "seconds": 0.3, "worker": "host-124-cd34", "relation": "octave"},
               {"label": "comb-filter/classic", "detector": "comb-filter", "preset": "classic", "version": "1.0.0",
                "status": "done", "bpm": 128.02, "confidence": 0.83,
                "candidates": [{"bpm": 128.02, "strength": 1}, {"bpm": 64.01, "strength": 0.42}],
                "seconds": 0.41, "worker": "host-123-ab12", "relation": "match"},
               {"label": "statistical-energy", "detector": "statistical-energy", "preset": "default", "version": "1.0.0",
                "status": "failed", "confidence": 0, "candidates": [], "seconds": 0,
                "failure": {"code": "worker-lost", "message": "the worker died on all 3 attempts"}, "relation": "wrong"}
             ]}
            """)
    }

    /// An untagged song without a reference tempo, on which no detector found a tempo.
    static var bareSongComparison: SongComparison {
        decoded(SongComparison.self, """
            {"song": "\(otherSong)", "file": "noise.wav", "duration_s": 12, "consensus": {"bpm": null, "detectors": []},
             "results": [
               {"label": "comb-filter", "detector": "comb-filter", "preset": "default", "version": "1.0.0",
                "status": "no-tempo", "confidence": 0, "candidates": [], "seconds": 0.02}
             ]}
            """)
    }

    static var libraryComparison: LibraryComparison {
        decoded(LibraryComparison.self, """
            {"songs": 120,
             "agreements": [
               {"first": "autocorrelation", "second": "comb-filter", "songs": 118, "agree": 0.71, "agree_octave": 0.93},
               {"first": "autocorrelation", "second": "comb-filter/classic", "songs": 0, "agree": 0, "agree_octave": 0}
             ],
             "accuracy": [
               {"detector": "autocorrelation", "count": 40, "acc1": 0.6, "acc2": 0.9, "mae": 12.5},
               {"detector": "comb-filter/classic", "count": 2, "acc1": 0, "acc2": 0}
             ],
             "histogram": [{"lower": 80, "width": 10, "count": 3}, {"lower": 90, "width": 10, "count": 0}],
             "to_check": [
               {"song": "3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a3f9a", "file": "ballad.mp3",
                "consensus": {"bpm": 132.3, "detectors": ["comb-filter"], "confidence": 0.18},
                "tempi": [{"detector": "autocorrelation", "bpm": 66.2}, {"detector": "comb-filter", "bpm": 132.3},
                          {"detector": "statistical-energy", "bpm": null}],
                "reasons": ["disagree", "low-confidence"]}
             ],
             "to_check_total": 1,
             "tags": {"songs": 40,
               "detectors": [
                 {"detector": "autocorrelation", "songs": 38, "match": 0.71, "octave": 0.21, "triple": 0.03, "unrelated": 0.05},
                 {"detector": "consensus", "songs": 40, "match": 0.8, "octave": 0.15, "triple": 0, "unrelated": 0.05}
               ],
               "suspects": [
                 {"song": "0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e0c4e", "file": "drumfunk.flac", "tag": 87,
                  "consensus": {"bpm": 174.1, "detectors": ["autocorrelation", "comb-filter"], "confidence": 0.74},
                  "looks": "octave"}
               ],
               "suspects_total": 1}}
            """)
    }

    /// Two segments; the library ran short of songs for the second.
    static var playlist: Playlist {
        decoded(Playlist.self, """
            {"entries": [
               {"position": 1, "start_s": 0, "cadence": 128, "match": {"song": "\(song)", "bpm": 128.02, "factor": 1,
                "detector": "consensus", "detectors": ["comb-filter"], "title": "Night Drive", "artist": "Kilo",
                "file": "song.wav", "duration_s": 181.5}, "off_pct": 0.016, "fits": true},
               {"position": 2, "start_s": 181.5, "cadence": 170, "match": {"song": "\(otherSong)", "bpm": 85.1,
                "factor": 0.5, "detector": "consensus", "detectors": ["comb-filter"], "title": null, "artist": null,
                "file": "slow.flac", "duration_s": 240}, "off_pct": 0.118, "fits": true},
               {"position": 3, "start_s": 421.5, "cadence": 170, "match": {"song": "\(thirdSong)", "bpm": 160.2,
                "factor": 1, "detector": "consensus", "detectors": ["autocorrelation", "comb-filter"], "title": null,
                "artist": null, "file": "near.mp3", "duration_s": 350}, "off_pct": -5.765, "fits": false}
             ],
             "fills": [
               {"segment": {"cadence": 128, "duration_s": 180}, "filled_s": 181.5, "short": false, "start_s": 0,
                "planned_start_s": 0, "beyond_tolerance_s": 0, "mean_off_pct": 0.016, "max_off_pct": 0.016},
               {"segment": {"cadence": 170, "duration_s": 600}, "filled_s": 590, "short": false, "start_s": 181.5,
                "planned_start_s": 180, "beyond_tolerance_s": 350, "mean_off_pct": 2.941, "max_off_pct": 5.765},
               {"segment": {"cadence": 160, "duration_s": 300}, "filled_s": 0, "short": true, "start_s": 771.5,
                "planned_start_s": 780, "beyond_tolerance_s": 0}
             ]}
            """)
    }

    /// A file name, a prefix, a file hashed by the client, an ambiguous file name and an unknown path.
    static var resolved: ResolveResponse {
        let one = song, other = otherSong
        return ResolveResponse(songs: [
            SongResolution(name: "dev_039.mp3", song: one, file: "dev_039.mp3", by: .fileName),
            SongResolution(name: "3f9a3f9a", song: one, file: "dev_039.mp3", by: .prefix),
            SongResolution(name: song.hex, song: one, file: "dev_039.mp3", by: .id),
            SongResolution(
                name: "intro.mp3", error: .ambiguousName("intro.mp3", candidates: [.init(song: one, file: "intro.mp3"), .init(song: other, file: "intro.mp3")])),
            SongResolution(name: "/music/gone.flac", error: .unknownSong("/music/gone.flac")),
        ])
    }

    /// A write, a skip and a failure, as `tags` with `all` answers them.
    static var tagReports: TagsResponse {
        var written = TagReport(file: "/music/Kilo/Night Drive.mp3", song: song, outcome: .written)
        (written.bpm, written.confidence, written.from) = (128.02, 0.83, "consensus")
        written.fields = [TagField(name: "TBPM", value: "128"), TagField(name: "TXXX:BPM", value: "128.0")]
        (written.backup, written.newSong) = ("/music/Kilo/Night Drive.mp3.bak", thirdSong)
        let skipped = TagReport(file: nil, song: otherSong, outcome: .skipped)
            .because("no file of this song below the server's library roots")
        var failed = TagReport(file: "/music/locked.flac", song: nil, outcome: .failed).because("/music/locked.flac: the file is read-only")
        failed.code = ErrorCode(rawValue: "read-only")
        return TagsResponse(files: [written, skipped, failed], total: 120)
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
            .ready(ReadyBody(workerId: "host-124-cd34", detector: DetectorInfo(descriptor), params: params, roots: ["/music", "/srv/audio"])),
            .result(ResultBody(job: 41, attempt: 2, analysis: analysis,
                audio: AudioFacts(format: "wav", durationS: 181.5, sampleRate: 44100, channels: 2), envelopeHopS: 0.0232),
                envelope: envelope),
            .result(ResultBody(job: 41, attempt: 2, analysis: analysis, audio: nil), envelope: nil),
            .result(ResultBody(job: 41, attempt: 1, error: ErrorBody(code: .corrupt, message: "song.wav: bad chunk at byte 44")), envelope: nil),
            .heartbeat,
            .disconnect(DisconnectBody(reason: "shutting down")),
            .offer(offer),
            .songResult(
                SongResultBody(
                    song: song, audio: AudioFacts(format: "flac", durationS: 181.5, sampleRate: 44100, channels: 2),
                    envelopeHopS: 0.0232,
                    results: [
                        SongJobAnswer(job: 41, attempt: 2, analysis: analysis),
                        SongJobAnswer(job: 42, attempt: 1, error: ErrorBody(code: .invalidParameter, message: "max_bpm: 900 is above 400")),
                    ],
                    beatGrid: BeatGrid(bpm: 128.004, firstBeatS: 0.214, clarity: 4.1)),
                envelope: envelope),
            .songResult(
                SongResultBody(
                    song: song,
                    results: [SongJobAnswer(job: 41, attempt: 1, error: ErrorBody(code: .corrupt, message: "song.wav: bad chunk at byte 44"))]),
                envelope: nil),
            .offer(OfferBody(workerId: "host-125-ef56", detectors: offer.detectors, roots: ["/music"], identifies: true)),
            .identified(
                IdentifiedBody(
                    request: 7,
                    files: [
                        FileIdentity(sha256: song, size: 10_912_345, mtimeNs: 1_764_100_000_123_456_789),
                        FileIdentity(error: ErrorBody(code: .notFound, message: "/music/Albums/B/gone.mp3: no such file on the server")),
                    ])),
        ]
    }

    static var offer: OfferBody {
        OfferBody(
            workerId: "host-123-ab12",
            detectors: [
                DetectorOffer(detector: DetectorInfo(descriptor), params: params),
                DetectorOffer(detector: DetectorInfo(otherDescriptor), params: otherParams),
            ])
    }

    static let otherDescriptor = DetectorDescriptor(
        name: "autocorrelation", version: "2.0.0", summary: "Autocorrelation of the onset envelope", specific: [])

    static var otherParams: ParameterSet {
        // The defaults of a declaration always resolve.
        (try? otherDescriptor.resolve()) ?? ParameterSet()
    }

    static var songJob: SongJobBody {
        SongJobBody(
            song: song, name: "song.flac", timeLimitS: 600, envelope: true,
            jobs: [
                SongJobEntry(job: 41, attempt: 2, detector: descriptor.name, params: params),
                SongJobEntry(job: 42, attempt: 1, detector: otherDescriptor.name, params: otherParams),
            ])
    }

    static var coordinatorMessages: [CoordinatorMessage] {
        [
            .job(job, audio: audio),
            .job(
                JobBody(
                    job: 42, attempt: 1, song: song, name: "song.flac", params: params, timeLimitS: 600, envelope: true,
                    location: JobLocation(root: "/music", path: "Albums/A/song.flac")), audio: []),
            .songJob(songJob, audio: audio),
            .identify(
                IdentifyBody(
                    request: 7,
                    files: [JobLocation(root: "/music", path: "Albums/A/song.flac"), JobLocation(root: "/music", path: "Albums/B/gone.mp3")])),
            .heartbeat,
            .disconnect(DisconnectBody(error: ProtocolError.unsupportedVersion(received: "TACTUS9", supported: ["TACTUS1", "TACTUS2"]).body)),
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
            .scanProgress({
                var progress = ScanSummary(
                    new: 3, unchanged: 408, skipped: [ScanSkip(path: "/music/Inbox/notes.txt", reason: "not audio", code: .unsupportedFormat)],
                    queuedJobs: 9, files: 1000, looked: 412, seconds: 0.5)
                progress.skippedCount = 1
                return progress
            }()),
        ]
    }
}
