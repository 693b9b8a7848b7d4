import ArgumentParser
import Foundation
import TactusAudio
import TactusClient
import TactusModel
import TactusProtocol
import TactusTestSupport

/// `tactus-bench inplace`: a music folder analysed in place by a real `tactus serve`: the scan
/// rate of an unchanged tree, the data directory's size after analysing a folder, and the time
/// from a file's close to its analysis under `serve --watch`.
struct InPlaceBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inplace",
        abstract: "Scan rate of an unchanged tree, data directory size after an in-place scan, close-to-analysis time under --watch.",
        discussion: """
            1. Writes --files distinct WAV files (--file-seconds each) in folders of 50, starts `tactus serve \
            --library-root DIR --no-local-workers`, scans once (every file is new: hashed, probed, recorded, its \
            jobs queued), then --rescans more times with nothing changed and prints the files per second of each \
            (the server's own time and the `tactus scan` process's wall time).
            2. Writes --songs songs of --song-seconds, starts a server with its local workers, scans, waits \
            until every job is done, stops the server and prints the data directory's size against the music's.
            3. Starts `tactus serve --watch` on an empty root, copies --watch-rounds songs in one after the \
            other (each written outside and copied in: the copy's close is the start) and prints the seconds \
            from each file's close to the end of its last detector's job.
            """)

    @Option(help: "Files of the unchanged tree.")
    var files = 1000

    @Option(help: "Seconds of audio per file of the tree (22.05 kHz mono 16-bit WAV).")
    var fileSeconds = 5.0

    @Option(help: "Scans of the unchanged tree after the first.")
    var rescans = 3

    @Option(help: "Songs analysed for the data-directory figure.")
    var songs = 12

    @Option(help: "Seconds per song for the data-directory figure and the watch rounds (44.1 kHz stereo 16-bit WAV).")
    var songSeconds = 120.0

    @Option(help: "Songs copied into a watched root, one after the other.")
    var watchRounds = 3

    @OptionGroup var executable: TactusExecutableOption

    func run() throws {
        let tactus = try executable.path()
        try scanRate(tactus)
        try dataDirectory(tactus)
        try watchLatency(tactus)
    }

    /// A drum pattern at `bpm` written as a WAV file at `path`, its bytes made unique by `seed`.
    private static func writeSong(_ path: String, bpm: Double, seconds: Double, sampleRate: Double, stereo: Bool, seed: UInt64) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let signal = Synth.drumPattern(bpm: bpm, seconds: seconds, sampleRate: sampleRate, seed: seed)
        try AudioFileWriter(.wav16).write(stereo ? [signal, signal] : [signal], sampleRate: Int(sampleRate), to: path)
    }

    private static func bytes(under directory: String) -> Int {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var total = 0
        while let name = enumerator?.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? Int) ?? 0 }
        }
        return total
    }

    /// Runs `tactus scan --json` and returns the summary and the process's wall time.
    private static func scan(_ tactus: String, _ frontend: String) throws -> (ScanSummary, Double) {
        let result = try CLI.runProgram(tactus, ["scan", "--json", "--server", frontend, "--timeout", "60"])
        guard result.status == 0 else { throw BenchFailure("tactus scan failed: \(result.standardError)") }
        let summary = try JSONDecoder().decode(ScanSummary.self, from: Data(result.standardOutput.utf8))
        return (summary, result.seconds)
    }

    private func scanRate(_ tactus: String) throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-inplace-tree")
        let root = directory.file("music")
        let base = Synth.drumPattern(bpm: 120, seconds: fileSeconds, sampleRate: 22_050)
        for index in 0..<files {
            var signal = base
            signal[index % signal.count] += Float(index + 1) * 1e-4  // distinct bytes, distinct songs
            let path = root + "/folder\(index / 50)/track\(index).wav"
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try AudioFileWriter(.wav16).write([signal], sampleRate: 22_050, to: path)
        }
        let music = Self.bytes(under: root)
        let server = try ServeProcess(
            executable: tactus, dataDirectory: directory.file("data"), extraArguments: ["--library-root", root, "--no-local-workers"])
        defer { server.stop() }
        let (first, firstWall) = try Self.scan(tactus, server.endpoints.frontend)
        print(String(
            format: "first scan of %d files (%.1f MB): %d new, %d skipped, %d jobs queued in %.2f s (server) / %.2f s (tactus scan): %.0f files/s",
            first.files, Double(music) / 1e6, first.new, first.skipped.count, first.queuedJobs, first.seconds, firstWall,
            Double(first.files) / first.seconds))
        for round in 1...max(1, rescans) {
            let (again, wall) = try Self.scan(tactus, server.endpoints.frontend)
            guard again.unchanged == files else { throw BenchFailure("rescan \(round): \(again.unchanged) of \(files) unchanged") }
            print(String(
                format: "unchanged rescan %d of %d files: %.3f s (server, %.0f files/s) / %.3f s (tactus scan process, %.0f files/s)",
                round, again.files, again.seconds, Double(again.files) / again.seconds, wall, Double(again.files) / wall))
        }
    }

    private func dataDirectory(_ tactus: String) throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-inplace-size")
        let root = directory.file("music")
        for index in 0..<songs {
            try Self.writeSong(
                root + "/album\(index / 4)/song\(index).wav", bpm: 80 + Double(index) * 7, seconds: songSeconds, sampleRate: 44_100,
                stereo: true, seed: UInt64(index + 1))
        }
        let music = Self.bytes(under: root)
        let data = directory.file("data")
        let server = try ServeProcess(executable: tactus, dataDirectory: data, extraArguments: ["--library-root", root])
        let started = ContinuousClock.now
        let (summary, _) = try Self.scan(tactus, server.endpoints.frontend)
        let client = try TactusClient(server: server.endpoints.frontend, timeout: .seconds(10))
        while true {
            let status = try client.status().server
            let queued = status?.queue.values.reduce(0, +) ?? 0
            if queued == 0 && status?.workers.allSatisfy({ $0.job == nil }) == true { break }
            guard ContinuousClock.now - started < .seconds(3600) else { throw BenchFailure("the analyses took over an hour") }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let analysed = (ContinuousClock.now - started).seconds
        let found = try client.query(QueryRequest(minBpm: 20, maxBpm: 400, limit: TempoQuery.maxRequestLimit)).count
        guard found == songs else { throw BenchFailure("\(found) of \(songs) songs have a tempo after the analyses") }
        let running = Self.bytes(under: data)
        server.stop()
        let stopped = Self.bytes(under: data)
        print(String(
            format: "data directory after analysing %d songs (%.1f MB of WAV) in place in %.1f s: %.2f MB while serving, "
                + "%.2f MB after stop = %.2f %% of the music (blobs: %d bytes)",
            summary.new, Double(music) / 1e6, analysed, Double(running) / 1e6, Double(stopped) / 1e6,
            100 * Double(stopped) / Double(music), Self.bytes(under: data + "/blobs")))
    }

    private func watchLatency(_ tactus: String) throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-inplace-watch")
        let root = directory.file("music")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let server = try ServeProcess(executable: tactus, dataDirectory: directory.file("data"), extraArguments: ["--library-root", root, "--watch"])
        defer { server.stop() }
        try server.awaitWorkers(detectors: ["autocorrelation", "comb-filter", "statistical-energy"], perDetector: 1)
        let client = try TactusClient(server: server.endpoints.frontend, timeout: .seconds(10))
        var latencies = [Double]()
        for round in 0..<watchRounds {
            let outside = directory.file("incoming\(round).wav")
            try Self.writeSong(outside, bpm: 100 + Double(round) * 11, seconds: songSeconds, sampleRate: 44_100, stereo: true, seed: UInt64(100 + round))
            let song = try SongID(of: .file(outside))
            try FileManager.default.copyItem(atPath: outside, toPath: root + "/copied\(round).wav")
            let closed = ContinuousClock.now
            var queuedAfter: Double?
            while true {
                let jobs = (try? client.status(song: song).jobs) ?? []
                if queuedAfter == nil, !jobs.isEmpty { queuedAfter = (ContinuousClock.now - closed).seconds }
                if jobs.contains(where: { $0.state == .failed || $0.state == .cancelled }) {
                    throw BenchFailure("round \(round): a job failed: \(jobs.compactMap(\.error).map(\.message))")
                }
                if jobs.count == 3, jobs.allSatisfy({ $0.state == .done }) { break }
                guard ContinuousClock.now - closed < .seconds(600) else { throw BenchFailure("round \(round): not analysed within 600 s") }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let latency = (ContinuousClock.now - closed).seconds
            latencies.append(latency)
            print(String(
                format: "watch round %d (%.0f s song): queued %.2f s after its close, analysed by all 3 detectors %.2f s after it",
                round + 1, songSeconds, queuedAfter ?? .nan, latency))
        }
        print(String(format: "close to analysis under --watch: median %.2f s over %d rounds", latencies.sorted()[latencies.count / 2], latencies.count))
    }
}
