import Foundation
import TactusTestSupport
import Testing

/// `tactus serve` with its web gateway, on free loopback ports: every endpoint of the HTTP API
/// answered from the coordinator, bad input with the protocol's error codes and fitting
/// statuses, the pages, /metrics, the token, the address checks. (The OpenAPI document is
/// checked against real responses by Tests/Web/test_openapi.py, the pages in a real browser by
/// Tests/Web/test_browser.py, both run by `make test`.)
@Suite(.serialized)
struct WebGatewayTests {
    /// A server with its gateway on a free port.
    struct Served {
        let directory: TemporaryDirectory
        let serve: ServeProcess
        let http: HTTP

        init(_ arguments: [String] = [], workers: Int = 1) throws {
            directory = try TemporaryDirectory()
            serve = try ServeProcess(
                dataDirectory: directory.path + "/data", workersPerDetector: workers,
                extraArguments: ["--web", "127.0.0.1:0"] + arguments)
            guard let url = serve.webURL() else {
                serve.stop()
                throw Failure("the web gateway did not start (no DATA/web.json)")
            }
            http = HTTP(base: url)
        }

        /// Uploads a song and waits until its jobs are final; returns its id.
        func upload(_ bytes: [UInt8], name: String) throws -> String {
            let reply = http.send("POST", "/api/v1/songs?name=\(name)", body: Data(bytes), headers: ["Content-Type": "application/octet-stream"])
            guard reply.status == 202, let song = reply.json["song"] as? String else {
                throw Failure("upload of \(name): \(reply.status) \(reply.text)")
            }
            let deadline = Date().addingTimeInterval(180)
            while Date() < deadline {
                let jobs = http.get("/api/v1/status?song=\(song)").json["jobs"] as? [[String: Any]] ?? []
                if !jobs.isEmpty, jobs.allSatisfy({ ["done", "failed", "cancelled"].contains($0["state"] as? String ?? "") }) { return song }
                Thread.sleep(forTimeInterval: 0.2)
            }
            throw Failure("\(name) was not analysed within 180 s")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func theAPIAnswersFromTheCoordinatorAndRefusesBadInputWithTheProtocolsCodes() throws {
        let served = try Served()
        defer { served.serve.stop() }
        let http = served.http
        let slow = try served.upload(try TestSong.clickTrack(bpm: 100, seconds: 14), name: "slow.wav")
        let fast = try served.upload(try TestSong.clickTrack(bpm: 150, seconds: 12), name: "fast.wav")

        // Every song, newest first; a range; the octave; paging.
        let all = http.get("/api/v1/songs?order=newest")
        #expect(all.status == 200)
        let listed = (all.json["songs"] as? [[String: Any]] ?? []).compactMap { $0["song"] as? String }
        #expect(listed == [fast, slow])
        #expect((all.json["songs"] as? [[String: Any]] ?? []).allSatisfy { ($0["confidence"] as? Double).map { (0...1).contains($0) } ?? false })
        let ranged = (http.get("/api/v1/songs?min_bpm=140&max_bpm=160").json["songs"] as? [[String: Any]] ?? [])
        #expect(ranged.compactMap { $0["song"] as? String } == [fast])
        #expect(ranged.first?["file"] as? String == "fast.wav")
        let octave = http.get("/api/v1/songs?min_bpm=190&max_bpm=210&octave=true").json["songs"] as? [[String: Any]] ?? []
        #expect(octave.compactMap { $0["song"] as? String } == [slow])
        #expect(octave.first?["factor"] as? Double == 0.5)
        let second = http.get("/api/v1/songs?order=newest&limit=1&offset=1").json["songs"] as? [[String: Any]] ?? []
        #expect(second.compactMap { $0["song"] as? String } == [slow])

        // Sorted by the store over every song, not the page: a page of one holds the first of all.
        func firstSong(_ query: String) -> String? {
            (http.get("/api/v1/songs?limit=1&\(query)").json["songs"] as? [[String: Any]])?.first?["song"] as? String
        }
        #expect(firstSong("order=title") == fast && firstSong("order=title&descending=true") == slow)
        #expect(firstSong("order=duration") == fast && firstSong("order=duration&descending=true") == slow)
        #expect(firstSong("order=bpm&descending=true") == fast && firstSong("order=bpm&descending=false") == slow)
        #expect(firstSong("order=newest&descending=true") == slow)
        #expect(firstSong("order=title&offset=1") == slow)
        for order in ["artist", "confidence", "agreement"] {
            let both = [firstSong("order=\(order)"), firstSong("order=\(order)&descending=true")]
            #expect(Set(both.compactMap { $0 }) == [fast, slow] || both[0] == both[1], "\(order)")
        }
        // A detector's tempo comes with that analysis' confidence.
        let byDetector = http.get("/api/v1/songs?detector=comb-filter&order=confidence").json["songs"] as? [[String: Any]] ?? []
        #expect(byDetector.count == 2 && byDetector.allSatisfy { ($0["confidence"] as? Double).map { (0...1).contains($0) } ?? false })
        // The histogram of every match, whatever the limit.
        let counted = http.get("/api/v1/songs?limit=1&histogram=10")
        let histogram = counted.json["histogram"] as? [String: Any] ?? [:]
        #expect((counted.json["songs"] as? [Any])?.count == 1 && histogram["total"] as? Int == 2)
        let bins = histogram["bins"] as? [[String: Any]] ?? []
        let lowers = bins.compactMap { $0["lower"] as? Double }
        #expect(lowers.first.map { (90...100).contains($0) } == true && lowers.last.map { (140...150).contains($0) } == true, "\(bins)")
        #expect(bins.allSatisfy { $0["width"] as? Double == 10 } && lowers == lowers.indices.map { lowers[0] + Double($0) * 10 })
        #expect(bins.compactMap { $0["count"] as? Int }.reduce(0, +) == 2)
        #expect(http.get("/api/v1/songs").json["histogram"] == nil)
        // Bad orders and histograms: 400 with the protocol's code, naming the parameter.
        for (query, field) in [
            ("order=random", "order"), ("order=Title", "order"), ("descending=maybe", "descending"), ("histogram=0", "histogram"),
            ("histogram=2000", "histogram"), ("histogram=wide", "histogram"), ("detector=comb-filter&order=agreement", "order"),
        ] {
            let refused = http.get("/api/v1/songs?\(query)")
            #expect(refused.status == 400 && refused.code == "bad-request" && refused.text.contains(field), "\(query): \(refused.status) \(refused.text)")
        }
        // The page: sorted by a column over all songs, the column marked, the histogram of all of them.
        let sortedPage = http.get("/?order=title&descending=true&limit=1")
        #expect(sortedPage.status == 200 && sortedPage.text.contains("aria-sort=\"descending\"") && sortedPage.text.contains("by title, Z to A"))
        #expect(sortedPage.text.contains("Songs 1–1 of 2") && sortedPage.text.contains("all 2 songs of the search"))
        #expect(sortedPage.text.contains("slow.wav") && !sortedPage.text.contains(">fast.wav<"))

        // One song: its comparison, its analyses with windows, its figure.
        let song = http.get("/api/v1/songs/\(fast)")
        #expect(song.status == 200)
        let comparison = song.json["song"] as? [String: Any] ?? [:]
        #expect(comparison["file"] as? String == "fast.wav")
        #expect((comparison["results"] as? [Any])?.count == 3)
        let prefix = http.get("/api/v1/songs/\(fast.prefix(10))")
        #expect(prefix.status == 200)
        let result = http.get("/api/v1/songs/\(fast)/result?windows=true").json
        let analyses = result["analyses"] as? [[String: Any]] ?? []
        #expect(analyses.count == 3 && analyses.allSatisfy { !($0["windows"] as? [Any] ?? []).isEmpty })
        let figure = http.get("/api/v1/songs/\(fast)/figure.svg")
        #expect(figure.status == 200 && figure.header("Content-Type")?.hasPrefix("image/svg+xml") == true)
        #expect(figure.text.contains("<svg") && figure.text.contains("comb-filter"))

        // The library, the playlist as JSON and M3U8, the detectors, the status.
        let library = http.get("/api/v1/compare").json["library"] as? [String: Any] ?? [:]
        #expect(library["songs"] as? Int == 2)
        let playlist = http.get("/api/v1/playlist?cadence=150&minutes=0.2").json["playlist"] as? [String: Any] ?? [:]
        let entries = playlist["entries"] as? [[String: Any]] ?? []
        #expect((entries.first?["match"] as? [String: Any])?["song"] as? String == fast)
        let m3u8 = http.get("/api/v1/playlist?cadence=150&minutes=0.2&format=m3u8")
        #expect(m3u8.status == 200 && m3u8.header("Content-Type")?.hasPrefix("audio/x-mpegurl") == true)
        let lines = m3u8.text.split(separator: "\n").map(String.init)
        // An uploaded song has no path a player could open: left out, and named in a comment.
        #expect(lines.first == "#EXTM3U" && lines.contains { $0.hasPrefix("#PLAYLIST:") } && !lines.contains { $0.hasPrefix("#EXTINF") })
        #expect(lines.contains { $0.hasPrefix("# not listed: song \(fast.prefix(8))") && $0.contains("(fast.wav)") }, "\(lines)")
        #expect(m3u8.header("Tactus-Omitted") == "1")
        #expect(m3u8.header("Content-Disposition")?.contains(".m3u8") == true)
        let detectors = http.get("/api/v1/detectors").json["detectors"] as? [[String: Any]] ?? []
        // Every built-in detector is offered (beatnet too, though it runs only when named)...
        #expect(detectors.count == 4)
        let server = http.get("/api/v1/status").json["server"] as? [String: Any] ?? [:]
        // ...by the one local worker the server was started with.
        #expect((server["workers"] as? [Any])?.count == 1)

        // Bad input: the protocol's code and a fitting status, the field named.
        let notANumber = http.get("/api/v1/songs?min_bpm=fast")
        #expect(notANumber.status == 400 && notANumber.code == "bad-request" && notANumber.text.contains("min_bpm"))
        // A value quoted back has its escape sequence and its right-to-left override escaped.
        let escaped = http.get("/api/v1/songs?min_bpm=%1B%5B2J%E2%80%AEfast")
        #expect(escaped.status == 400 && escaped.text.contains(#"\\x1B[2J\\u{202E}fast"#), "\(escaped.text)")
        let reversed = http.get("/api/v1/songs?min_bpm=180&max_bpm=120")
        #expect(reversed.status == 400 && reversed.code == "bad-request" && reversed.text.contains("max_bpm"))
        let tooFast = http.get("/api/v1/songs?max_bpm=5000")
        #expect(tooFast.status == 400 && tooFast.code == "bad-request")
        let unknown = http.get("/api/v1/songs/\(String(repeating: "0", count: 64))")
        #expect(unknown.status == 404 && unknown.code == "not-found")
        let unknownFigure = http.get("/api/v1/songs/\(String(repeating: "0", count: 64))/figure.svg")
        #expect(unknownFigure.status == 404 && unknownFigure.code == "not-found")
        let hostile = http.get("/api/v1/songs/a%20b%3Cscript%3E")
        #expect(hostile.status == 400 && hostile.code == "bad-request")
        let format = http.get("/api/v1/playlist?cadence=150&format=xml")
        #expect(format.status == 400 && format.code == "bad-request" && format.text.contains("format"))
        let neither = http.get("/api/v1/playlist")
        #expect(neither.status == 400 && neither.code == "bad-request")
        let profile = http.get("/api/v1/playlist?profile=ten@fast")
        #expect(profile.status == 400 && profile.code == "bad-request" && profile.text.contains("profile"))
        let detector = http.get("/api/v1/songs?detector=Not%20A%20Detector")
        #expect(detector.status == 400 && detector.code == "bad-request")
        let empty = http.send("POST", "/api/v1/songs?name=empty.wav", body: Data())
        #expect(empty.status == 422 && empty.code == "empty")
        let noise = http.send("POST", "/api/v1/songs?name=noise.txt", body: Data("not audio at all, just text".utf8))
        #expect(noise.status == 202 || noise.code == "unsupported-format", "\(noise.status) \(noise.text)")
        let nowhere = http.get("/api/v1/nowhere")
        #expect(nowhere.status == 404 && nowhere.code == "not-found")

        // The pages.
        let home = http.get("/")
        #expect(home.status == 200 && home.text.contains("fast.wav") && home.text.contains("slow.wav"))
        #expect(home.text.contains("Tempo histogram of all 2 songs of the search"))
        let page = http.get("/songs/\(fast)")
        #expect(page.status == 200 && page.text.contains("<svg") && page.text.contains("comb-filter"))
        #expect(!page.text.contains("<?xml"))
        #expect(http.get("/songs/\(String(repeating: "0", count: 64))").status == 404)
        let compare = http.get("/compare")
        #expect(compare.status == 200 && compare.text.contains("Agreement between detectors"))
        let run = http.get("/playlist?cadence=150&minutes=0.2")
        #expect(run.status == 200 && run.text.contains("Download M3U8") && run.text.contains("fast.wav"))
        let badRun = http.get("/playlist?cadence=5000")
        #expect(badRun.status == 200 && badRun.text.contains("cadence"))
        let queue = http.get("/queue")
        #expect(queue.status == 200 && queue.text.contains("comb-filter") && queue.text.contains("EventSource"))

        // Metrics: workers per detector, jobs finished since the gateway started, analysis seconds.
        let metrics = http.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("tactus_workers{detector=\"comb-filter\"} 1"))
        // The one worker offers every detector (protocol version 2): it counts for each.
        #expect(metrics.text.contains("tactus_workers{detector=\"autocorrelation\"} 1"))
        #expect(metrics.text.contains("tactus_workers{detector=\"statistical-energy\"} 1"))
        let queuePage = http.get("/queue").text
        #expect(queuePage.contains("data-detector=\"autocorrelation\"><td class=\"lead\"><b>autocorrelation</b></td>\n<td class=\"num\" data-label=\"Workers\" data-field=\"workers\">1</td>"))
        #expect(metrics.text.contains("tactus_jobs_finished_total{detector=\"autocorrelation\"} 2"))
        #expect(metrics.text.contains("tactus_queue_jobs{detector=\"statistical-energy\"} 0"))
        #expect(metrics.text.contains("tactus_analysis_seconds_count{detector=\"comb-filter\"}"))
        #expect(metrics.text.contains("tactus_up 1"))
    }

    /// The M3U8 download is the CLI's playlist file: songs analysed in place at their absolute
    /// paths under the library root, uploaded songs (which have none) left out and named.
    @Test func aPlaylistsM3U8ListsSongsInPlaceByTheirPathsAndNamesTheUploadedOnes() throws {
        let music = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: music.file("Run"), withIntermediateDirectories: true)
        let root = URL(fileURLWithPath: music.path).resolvingSymlinksInPath().path
        try Data(try TestSong.clickTrack(bpm: 150, seconds: 12)).write(to: URL(fileURLWithPath: music.file("Run/steady #1.wav")))
        let served = try Served(["--library-root", root])
        defer { served.serve.stop() }
        let http = served.http
        let scan = try CLI.run(["scan", "--server", served.serve.endpoints.frontend])
        try #require(scan.status == 0, "\(scan.standardError)")
        let uploaded = try served.upload(try TestSong.clickTrack(bpm: 150, seconds: 13), name: "uploaded.wav")
        let deadline = Date().addingTimeInterval(180)
        while (http.get("/api/v1/songs").json["songs"] as? [Any])?.count ?? 0 < 2 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.3)
        }
        let m3u8 = http.get("/api/v1/playlist?cadence=150&minutes=1&format=m3u8")
        #expect(m3u8.status == 200)
        let lines = m3u8.text.split(separator: "\n").map(String.init)
        let path = root + "/Run/steady #1.wav"
        let entry = try #require(lines.firstIndex(of: path), "\(lines)")
        #expect(entry > 0 && lines[entry - 1] == "#EXTINF:12,steady #1.wav")
        #expect(lines.filter { $0.hasPrefix("#EXTINF") }.count == 1)
        #expect(lines.last?.hasPrefix("# not listed: song \(uploaded.prefix(8))") == true && lines.last?.contains("(uploaded.wav)") == true, "\(lines)")
        #expect(m3u8.header("Tactus-Omitted") == "1")
        let page = http.get("/playlist?cadence=150&minutes=1")
        #expect(page.text.contains("1 song has no file under the server") && page.text.contains("uploaded.wav"))
    }

    @Test func anOversizedUploadIsRefusedTooLargeAndCounted() throws {
        let served = try Served(["--no-local-workers", "--max-song-bytes", "4096"])
        defer { served.serve.stop() }
        let reply = served.http.send("POST", "/api/v1/songs?name=big.wav", body: Data(repeating: 1, count: 20_000))
        #expect(reply.status == 413 && reply.code == "too-large")
        #expect(reply.text.contains("big.wav"))
        #expect(served.http.get("/metrics").text.contains("tactus_submissions_refused_total{reason=\"too-large\"} 1"))
    }

    static let token = "s3cret-token-of-32-characters-xx"

    /// A server whose gateway needs ``token``, given in a file in `directory`.
    static func servedWithToken(in directory: TemporaryDirectory) throws -> Served {
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: directory.file("token")))
        return try Served(["--no-local-workers", "--web-token-file", directory.file("token")])
    }

    @Test func withATokenEveryRequestCarriesIt() throws {
        let directory = try TemporaryDirectory()
        let token = Self.token
        let served = try Self.servedWithToken(in: directory)
        defer { served.serve.stop() }
        let http = served.http

        let missing = http.get("/api/v1/status")
        #expect(missing.status == 401 && missing.code == "forbidden")
        #expect(missing.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(http.get("/api/v1/status", headers: ["Authorization": "Bearer wrong-token-wrong-token"]).status == 401)
        #expect(http.get("/metrics").status == 401)
        #expect(http.get("/api/v1/status", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        #expect(http.get("/metrics", headers: ["Authorization": "Bearer \(token)"]).status == 200)

        // A page sends a person to the login form, which sets the cookie and returns to the page.
        let page = http.get("/compare")
        #expect(page.status == 303 && page.header("Location") == "/login?next=/compare")
        #expect(http.get("/login?next=/compare").text.contains("type=\"password\""))
        let wrong = http.send("POST", "/login", body: Data("token=nope&next=%2Fcompare".utf8),
                              headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(wrong.status == 401 && wrong.text.contains("not this server"))
        let login = http.send("POST", "/login", body: Data("token=\(token)&next=%2Fcompare".utf8),
                              headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(login.status == 303 && login.header("Location") == "/compare")
        let cookie = login.header("Set-Cookie") ?? ""
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let value = cookie.split(separator: ";").first.map(String.init) ?? ""
        #expect(http.get("/compare", headers: ["Cookie": value]).status == 200)
        // The login form sends nobody to another site.
        let away = http.send("POST", "/login", body: Data("token=\(token)&next=%2F%2Fevil.example".utf8),
                             headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(away.header("Location") == "/")
    }

    /// Wrong tokens from one client: ten a minute are answered 401, then every try with a token
    /// (the right one too, which is not checked) is answered 429 with `Retry-After`, over the
    /// API and the login form; a session opened before goes on working.
    @Test func wrongTokensFromOneClientAreRefusedAfterTen() throws {
        let directory = try TemporaryDirectory()
        let token = Self.token
        let served = try Self.servedWithToken(in: directory)
        defer { served.serve.stop() }
        let http = served.http
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        let login = http.send("POST", "/login", body: Data("token=\(token)&next=%2F".utf8), headers: form)
        let session = try #require(login.header("Set-Cookie")?.split(separator: ";").first.map(String.init))

        for attempt in 1...10 {
            let wrong = http.get("/api/v1/status", headers: ["Authorization": "Bearer guess-number-\(attempt)-of-many"])
            #expect(wrong.status == 401, "try \(attempt): \(wrong.status) \(wrong.text)")
        }
        let refused = http.get("/api/v1/status", headers: ["Authorization": "Bearer guess-number-11-of-many"])
        #expect(refused.status == 429 && refused.code == "busy", "\(refused.status) \(refused.text)")
        #expect(refused.text.contains("too many wrong tokens"))
        #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(http.get("/api/v1/status", headers: ["Authorization": "Bearer \(token)"]).status == 429)
        let form429 = http.send("POST", "/login", body: Data("token=\(token)&next=%2F".utf8), headers: form)
        #expect(form429.status == 429 && form429.text.contains("too many wrong tokens"), "\(form429.status)")
        #expect(http.get("/api/v1/status", headers: ["Cookie": session]).status == 200)
    }

    @Test func aCurveServerAdmitsItsGateway() throws {
        let directory = try TemporaryDirectory()
        let keys = directory.path + "/keys", authorized = directory.path + "/authorized"
        try FileManager.default.createDirectory(atPath: authorized, withIntermediateDirectories: true)
        let generated = try CLI.run(["keys", "generate", "server", "--out", keys, "--json"])
        #expect(generated.status == 0)
        let served = try Served(["--no-local-workers", "--curve-secret-key", keys + "/server.key_secret", "--authorized-clients", authorized])
        defer { served.serve.stop() }
        // No client key is authorized but the one serve made for its gateway: the gateway gets answers.
        let status = served.http.get("/api/v1/status")
        #expect(status.status == 200, "\(status.text)")
        #expect((status.json["server"] as? [String: Any])?["accepting"] as? Bool == true)
    }

    @Test func listeningBeyondLoopbackNeedsATokenOrInsecure() throws {
        let directory = try TemporaryDirectory()
        let base = [
            "serve", "--data", directory.path, "--no-local-workers", "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*",
            "--events", "tcp://127.0.0.1:*",
        ]
        let refused = try CLI.run(base + ["--web", "0.0.0.0:0"])
        #expect(refused.status == 1 && refused.standardError.contains("--web-token-file"), "\(refused.standardError)")
        let web = try CLI.run(["web", "--listen", "0.0.0.0:0"])
        #expect(web.status == 1 && web.standardError.contains("--web-token-file"), "\(web.standardError)")
        try Data("short\n".utf8).write(to: URL(fileURLWithPath: directory.file("token")))
        let short = try CLI.run(base + ["--web", "0.0.0.0:0", "--web-token-file", directory.file("token")])
        #expect(short.status == 1 && short.standardError.contains("at least 16"), "\(short.standardError)")
        let malformed = try CLI.run(base + ["--web", "localhost"])
        #expect(malformed.status == 1 && malformed.standardError.contains("HOST:PORT"), "\(malformed.standardError)")
    }

    /// A number in a query is a plain decimal: hexadecimal (`0x10` is 16 to Swift), exponents,
    /// `inf` and `nan` are refused, naming the parameter, in the API and in the pages' forms.
    @Test func numbersInAQueryArePlainDecimals() throws {
        let served = try Served(["--no-local-workers"])
        defer { served.serve.stop() }
        for value in ["0x10", "0X1p4", "1e2", "1.6E1", "inf", "nan", "1.2.3", "16abc", "%2016", "-"] {
            let api = served.http.get("/api/v1/songs?min_bpm=\(value)")
            #expect(api.status == 400 && api.code == "bad-request" && api.text.contains("min_bpm"), "min_bpm=\(value): \(api.status) \(api.text)")
            #expect(api.text.contains("is not a plain decimal number"), "\(api.text)")
            let page = served.http.get("/?max_bpm=\(value)")
            #expect(page.status == 400 && page.text.contains("max_bpm"), "page max_bpm=\(value): \(page.status)")
        }
        // A cadence in a profile too (spaces around it are trimmed).
        for value in ["0x96", "1.5e2", "0x1p7", "150x", "nan"] {
            let playlist = served.http.get("/api/v1/playlist?profile=10m@\(value)")
            #expect(playlist.status == 400 && playlist.code == "bad-request", "profile=10m@\(value): \(playlist.status) \(playlist.text)")
        }
        for value in ["16", "120.5", "016"] {
            let api = served.http.get("/api/v1/songs?min_bpm=\(value)")
            #expect(api.status == 200, "min_bpm=\(value): \(api.status) \(api.text)")
        }
        #expect(served.http.get("/api/v1/playlist?profile=10m@150,90s@170.5").status == 200)
        // Errors name what was asked (attack round 6, L1): the profile's cadence that the
        // tolerance takes out of range, the events' song.
        let low = served.http.get("/api/v1/playlist?profile=10m@1")
        #expect(low.status == 400 && low.text.contains("profile: cadence 1"), "\(low.text)")
        let events = served.http.get("/api/v1/events?song=" + String(repeating: "a", count: 10_000))
        #expect(events.status == 400 && events.text.contains("events") && !events.text.contains("result"), "\(events.text)")
        // A profile of 10^20 hours is refused, the server going on (attack round 6, H1).
        let huge = served.http.get("/api/v1/playlist?profile=99999999999999999999h@170")
        #expect(huge.status == 400 && huge.text.contains("more than the 100000 minutes"), "\(huge.text)")
        #expect(served.http.get("/api/v1/status").status == 200)
    }

    @Test func aPortInUseIsNamedAtStart() throws {
        let directory = try TemporaryDirectory()
        let first = try Served(["--no-local-workers"])
        defer { first.serve.stop() }
        let port = URL(string: first.http.base)!.port!
        let second = try CLI.run([
            "serve", "--data", directory.path, "--no-local-workers", "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*",
            "--events", "tcp://127.0.0.1:*", "--web", "127.0.0.1:\(port)",
        ])
        #expect(second.status == 1 && second.standardError.contains("cannot listen on 127.0.0.1:\(port)"), "\(second.standardError)")
    }
}
