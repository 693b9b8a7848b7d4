import ArgumentParser
import Foundation
import TactusAudio
import TactusDetector
import TactusModel
import TactusStore
import TactusTestSupport

/// `tactus-bench store`: how fast the library stores analyses and answers BPM-range queries.
///
/// Builds a library of `--songs` songs analysed by three detectors (40-window series each),
/// timing the inserts, then times random 10-BPM range queries of each kind.
/// Targets: at least 5,000 analyses stored per second; queries under 5 ms (median).
struct StoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Library insert throughput and BPM-range query latency (targets: 5,000 analyses/s, 5 ms).")

    @Option(help: "Songs in the library (each analysed by 3 detectors).")
    var songs = 100_000

    @Option(help: "Analyses per transaction when storing in batches.")
    var batch = 1_000

    @Option(help: "Queries timed per kind.")
    var queries = 200

    @Option(help: "Folder for the temporary library (default: the system's temporary folder).")
    var directory: String?

    @Flag(help: "Keep the library file afterwards (its path is printed), for inspection.")
    var keep = false

    func run() throws {
        let folder = URL(fileURLWithPath: directory ?? NSTemporaryDirectory())
            .appendingPathComponent("tactus-store-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            if keep { print("library kept in \(folder.path)") } else { try? FileManager.default.removeItem(at: folder) }
        }
        let library = try Library(path: folder.appendingPathComponent("library.sqlite").path)
        var random = SeededGenerator(seed: 42)
        let detectors = ["comb-filter", "statistical-energy", "autocorrelation"]
            .map { DetectorDescriptor(name: $0, version: "1", summary: "", specific: []) }
        let params = try detectors.map { try $0.resolve() }

        // Songs: one transaction per batch.
        let ids = (0..<songs).map { SongID(hashing: Data("bench song \($0)".utf8)) }
        let songSeconds = try time {
            for start in stride(from: 0, to: songs, by: batch) {
                try library.record(
                    (start..<min(start + batch, songs)).map { n in
                        SongAnalyses(song: song(ids[n], n, &random), analyses: [])
                    })
            }
        }
        report("songs recorded (batches of \(batch))", rate: Double(songs) / songSeconds, unit: "songs/s")

        // Analyses: every song by three detectors, in batches; the first 100,000 are the figure.
        var pending = [(song: SongID, analysis: AnalysisRecord)]()
        var stored = 0
        var firstHundredThousand: Double?
        var elapsed = 0.0
        for n in 0..<songs {
            let tempo = Double.random(in: 60...200, using: &random)
            for (index, descriptor) in detectors.enumerated() {
                pending.append((ids[n], analysis(descriptor, params[index], tempo: tempo, &random)))
            }
            if pending.count >= batch || n == songs - 1 {
                let batchToStore = pending
                elapsed += try time { try library.store(batchToStore) }
                stored += pending.count
                pending.removeAll(keepingCapacity: true)
                if firstHundredThousand == nil, stored >= 100_000 { firstHundredThousand = Double(stored) / elapsed }
            }
        }
        report(
            "analyses stored, first 100,000 (batches of \(batch))", rate: firstHundredThousand ?? Double(stored) / elapsed,
            unit: "analyses/s", target: 5_000)
        report("analyses stored, all \(stored)", rate: Double(stored) / elapsed, unit: "analyses/s", target: 5_000)

        // One transaction per analysis, as a coordinator storing results one by one (replacements).
        let single = min(5_000, songs)
        let singleSeconds = try time {
            for n in 0..<single {
                let tempo = Double.random(in: 60...200, using: &random)
                try library.store(analysis(detectors[n % 3], params[n % 3], tempo: tempo, &random), for: ids[n])
            }
        }
        report("analyses stored one transaction each", rate: Double(single) / singleSeconds, unit: "analyses/s")

        // Queries: random 10-BPM ranges, 50 songs closest to the centre.
        let kinds: [(String, TempoSource, Bool)] = [
            ("consensus", .consensus, false), ("consensus, octave", .consensus, true),
            ("detector", .detector("comb-filter"), false), ("detector, octave", .detector("comb-filter"), true),
            ("agree 2", .agreement(minimum: 2), false), ("agree 2, octave", .agreement(minimum: 2), true),
        ]
        for (name, source, octave) in kinds {
            var times = [Double]()
            for _ in 0..<queries {
                let lo = Double.random(in: 70...180, using: &random).rounded()
                let query = TempoQuery(range: lo...(lo + 10), source: source, octave: octave, limit: 50)
                times.append(try time { _ = try library.query(query) })
            }
            times.sort()
            let median = times[times.count / 2] * 1000
            let target = 5.0
            let label = "query: \(name) (10 BPM, 50 closest)".padding(toLength: 52, withPad: " ", startingAt: 0)
            print(
                label
                    + String(
                        format: " median %6.2f ms  p90 %6.2f ms  target < %.0f ms  ", median,
                        times[times.count * 9 / 10] * 1000, target)
                    + (median < target ? "PASS" : "FAIL"))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: library.path)[.size] as? Int) ?? 0
        print(String(format: "library file: %.1f MB for %d songs, %d analyses", Double(size) / 1e6, songs, stored))
    }

    private func song(_ id: SongID, _ n: Int, _ random: inout SeededGenerator) -> SongRecord {
        SongRecord(
            id: id, fileName: "song-\(n).mp3", byteSize: 4_000_000 + n, format: "mp3", codec: "mp3", sampleRate: 44_100,
            channels: 2, durationS: Double.random(in: 120...360, using: &random),
            tags: AudioTags(title: "Song \(n)", artist: "Artist \(n % 997)", album: "Album \(n % 4999)", genre: "Bench", year: 1960 + n % 60))
    }

    /// A detector's result near `tempo`: usually right, sometimes an octave off, 40 windows.
    private func analysis(
        _ descriptor: DetectorDescriptor, _ params: ParameterSet, tempo: Double, _ random: inout SeededGenerator
    ) -> AnalysisRecord {
        let roll = Double.random(in: 0..<1, using: &random)
        let bpm = tempo * (roll < 0.1 ? 2 : roll < 0.2 ? 0.5 : 1) * Double.random(in: 0.99...1.01, using: &random)
        var windows = [AnalysisWindow]()
        windows.reserveCapacity(40)
        for i in 0..<40 {
            let windowTempo = bpm * Double.random(in: 0.98...1.02, using: &random)
            windows.append(
                AnalysisWindow(
                    startS: Double(i) * 4.5, durationS: 6, energy: Double.random(in: 0..<0.1, using: &random),
                    bpm: windowTempo, strength: Double.random(in: 0...1, using: &random)))
        }
        let output = DetectorOutput(
            bpm: bpm, confidence: Double.random(in: 0.3...1, using: &random),
            candidates: [TempoCandidate(bpm: bpm, strength: 1), TempoCandidate(bpm: bpm / 2, strength: 0.5)],
            windows: windows)
        return AnalysisRecord(
            TempoAnalysis(descriptor: descriptor, params: params, output: output, seconds: 0.4), worker: "bench")
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        let duration = ContinuousClock.now - start
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func report(_ name: String, rate: Double, unit: String, target: Double? = nil) {
        let verdict = target.map { rate >= $0 ? "  target >= \(Int($0))  PASS" : "  target >= \(Int($0))  FAIL" } ?? ""
        print(name.padding(toLength: 52, withPad: " ", startingAt: 0) + String(format: " %8.0f ", rate) + unit + verdict)
    }
}
