import ArgumentParser
import Foundation
import TactusAnalysis
import TactusAudio
import TactusDSP
import TactusDetector
import TactusTestSupport

/// `tactus-bench accuracy`: how often each detector (each preset) and the consensus find the
/// reference tempo of the development corpus, how fast each detector is on a 3-minute MP3, and
/// how much memory `tactus analyze` needs for a 20-minute song.
struct AccuracyBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accuracy",
        abstract: "Acc1/Acc2 per detector, preset and style on each corpus, calibration; detector speed; analyze's peak memory.",
        discussion: """
            Accuracy: every song of the corpus (truth.csv: file, bpm, ..., style) is decoded \
            once and analysed by every detector in every preset. Acc1: within 4 % of the \
            reference tempo; Acc2: also accepting 2x, 1/2x, 3x and 1/3x. The consensus is that of \
            the default presets (advisory detectors do not vote; also printed with every default detector voting, and without each in turn). Targets: on ../shared/corpus/real, consensus Acc1 >= 89 % and \
            Acc2 >= 96 %, every default detector Acc2 >= 92 %; on ../shared/corpus/dev, consensus \
            92.5 % / 100 %, every default detector Acc2 >= 95 %. Also printed: how often every \
            default detector is wrong together (what no consensus can fix) and, per detector and \
            for the consensus, confidence bands against the fraction of songs right (calibration), \
            the songs of steady tempo whose tempo map (the consensus') is split (target: none), \
            and whether the songs whose truth notes say "ramp" are found changing.

            Speed: a synthesised 3-minute 44.1 kHz stereo MP3, decoded alone, each detector's \
            default preset on the decoded song (CPU time of its thread, so a busy machine does not \
            count; best of three) and the whole analysis with decoding (wall time). Target: each \
            detector under 0.05 s of CPU (beatnet, a neural network: 0.25 s), decoding excluded.

            Memory: the peak resident memory (VmHWM) of a fresh process analysing a \
            synthesised 20-minute song as `tactus analyze` does. Target: under 150 MB.
            """
    )

    @Option(help: ArgumentHelp("Directory with the songs and truth.csv (repeat for several corpora).", valueName: "path"))
    var corpus: [String] = ["../shared/corpus/dev", "../shared/corpus/real"]

    @Option(help: .hidden)
    var memoryProbe: String?

    @Flag(help: "Print each song's result.")
    var verbose = false

    func run() throws {
        if let memoryProbe { return try probeMemory(memoryProbe) }
        for corpus in corpus { try measureAccuracy(corpus) }
        try measureSpeed()
        try measureMemory()
    }

    // MARK: Accuracy

    /// One detector in one preset.
    private struct Configuration {
        var label: String
        var detector: any TempoDetector
        var isDefault: Bool
    }

    /// Acc1 and Acc2 hits over a number of songs.
    private struct Score {
        var songs = 0
        var acc1 = 0
        var acc2 = 0

        mutating func add(_ bpm: Double?, reference: Double) {
            songs += 1
            if TempoRelation.acc1(bpm, reference) { acc1 += 1 }
            if TempoRelation.acc2(bpm, reference) { acc2 += 1 }
        }

        var text: String {
            guard songs > 0 else { return "-" }
            return String(format: "%5.1f %% %5.1f %%", 100 * Double(acc1) / Double(songs), 100 * Double(acc2) / Double(songs))
        }
    }

    private func configurations() throws -> [Configuration] {
        let registry = BuiltinDetectors.registry
        return try registry.descriptors.flatMap { descriptor in
            guard case .choice(let presets)? = descriptor.parameter("preset")?.kind else { return [Configuration]() }
            return try presets.map { preset in
                Configuration(
                    label: "\(descriptor.name) \(preset)",
                    detector: try registry.make(descriptor.name, parameters: ParameterSet(["preset": .text(preset)])),
                    isDefault: preset == "default")
            }
        }
    }

    /// Confidence bands against the fraction of songs right (Acc1): what a confidence means.
    private struct Calibration {
        static let edges = [0.0, 0.25, 0.5, 0.75, 1.0001]
        var songs = [Int](repeating: 0, count: edges.count - 1)
        var right = [Int](repeating: 0, count: edges.count - 1)

        mutating func add(confidence: Double, right isRight: Bool) {
            let band = max(0, min(Self.edges.count - 2, (Self.edges.firstIndex { confidence < $0 } ?? Self.edges.count - 1) - 1))
            songs[band] += 1
            if isRight { right[band] += 1 }
        }

        var text: String {
            songs.indices.map { band in
                let range = String(format: "%.2f-%.2f", Self.edges[band], min(Self.edges[band + 1], 1))
                guard songs[band] > 0 else { return "\(range): -" }
                return "\(range): \(right[band])/\(songs[band]) (" + String(format: "%.0f %%", 100 * Double(right[band]) / Double(songs[band])) + ")"
            }.joined(separator: "  ")
        }
    }

    private func measureAccuracy(_ corpus: String) throws {
        let truth = try Truth(csv: corpus + "/truth.csv")
        let configurations = try configurations()
        let analyzer = SongAnalyzer(detectors: configurations.map(\.detector))
        let consensusLabel = "consensus (default presets)"
        // The consensus of every default detector, advisory ones included, and without each in
        // turn: what each detector adds to it (advisory detectors do not vote in the consensus).
        let everyLabel = "consensus, every detector voting"
        let defaultNames = configurations.filter(\.isDefault).map(\.detector.descriptor.name)
        let withoutLabels = defaultNames.map { "consensus without \($0)" }
        let labels = configurations.map(\.label) + [consensusLabel, everyLabel] + withoutLabels
        var overall = [String: Score]()
        var byStyle = [String: [String: Score]]()
        var failures: [String] = []
        var calibration = [String: Calibration]()
        var allWrong = (acc1: 0, acc2: 0)
        // Each consensus' tempo map should be one steady segment, but for the songs whose
        // notes say they ramp, which should change.
        var split: [String] = []
        var rampsFound: [String] = [], rampsMissed: [String] = []
        var audioSeconds = 0.0
        let start = Date()
        for song in truth.songs {
            let result = analyzer.analyze(.file(corpus + "/" + song.file))
            if let error = result.error { failures.append(error.message) }
            audioSeconds += result.durationSeconds ?? 0
            let defaults = zip(configurations, result.analyses).filter { $0.0.isDefault }.map(\.1)
            var found = [String: Double?]()
            for (configuration, analysis) in zip(configurations, result.analyses) {
                found[configuration.label] = analysis.bpm
            }
            let consensus = Consensus.of(defaults, advisory: BuiltinDetectors.registry.advisoryNames)
            found[consensusLabel] = result.error == nil ? consensus.bpm : nil
            found[everyLabel] = result.error == nil ? Consensus.of(defaults).bpm : nil
            for (name, label) in zip(defaultNames, withoutLabels) {
                let others = defaults.filter { $0.detector != name }
                found[label] = result.error == nil ? Consensus.of(others).bpm : nil
            }
            if result.error == nil {
                for analysis in defaults {
                    calibration[analysis.detector, default: Calibration()].add(
                        confidence: analysis.confidence, right: TempoRelation.acc1(analysis.bpm, song.bpm))
                }
                calibration[consensusLabel, default: Calibration()].add(
                    confidence: consensus.confidence ?? 0, right: TempoRelation.acc1(consensus.bpm, song.bpm))
                if let map = consensus.tempoMap {
                    let description = "\(song.file) (\(map.segments.count) segment\(map.segments.count == 1 ? "" : "s"), \(map.segments.filter { !$0.isSteady }.count) ramping)"
                    if song.ramps {
                        if map.stable { rampsMissed.append(song.file) } else { rampsFound.append(description) }
                    } else if !map.stable {
                        split.append(description)
                    }
                }
                if defaults.allSatisfy({ !TempoRelation.acc1($0.bpm, song.bpm) }) { allWrong.acc1 += 1 }
                if defaults.allSatisfy({ !TempoRelation.acc2($0.bpm, song.bpm) }) { allWrong.acc2 += 1 }
            }
            for label in labels {
                let bpm = found[label] ?? nil
                overall[label, default: Score()].add(bpm, reference: song.bpm)
                byStyle[song.style, default: [:]][label, default: Score()].add(bpm, reference: song.bpm)
            }
            if verbose {
                let estimates = labels.map { label in (found[label] ?? nil).map { String(format: "%.1f", $0) } ?? "-" }
                print("\(song.file) \(song.style) \(song.bpm): " + estimates.joined(separator: " "))
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        print("Accuracy on \(truth.songs.count) songs of \(corpus) (\(String(format: "%.0f", audioSeconds)) s of audio, "
              + String(format: "%.1f s", elapsed) + "); Acc1 Acc2")
        let width = labels.map(\.count).max() ?? 0
        for label in labels {
            print("  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + overall[label, default: Score()].text)
        }
        print("Per style (\(labels.joined(separator: " | "))):")
        for style in byStyle.keys.sorted() {
            let scores = labels.map { byStyle[style]?[$0]?.text ?? "-" }
            print("  " + "\(style) (\(byStyle[style]?[labels[0]]?.songs ?? 0))".padding(toLength: 14, withPad: " ", startingAt: 0)
                  + scores.joined(separator: " | "))
        }
        let songs = max(truth.songs.count, 1)
        print("All default detectors wrong together: Acc1 \(allWrong.acc1) of \(truth.songs.count) songs ("
              + String(format: "%.1f %%", 100 * Double(allWrong.acc1) / Double(songs)) + "), Acc2 \(allWrong.acc2) ("
              + String(format: "%.1f %%", 100 * Double(allWrong.acc2) / Double(songs)) + "): what no consensus can fix")
        let steadySongs = truth.songs.filter { !$0.ramps }.count
        print("Tempo maps: \(split.count) of \(steadySongs) songs of steady tempo split (target: none)" + (split.isEmpty ? "" : ": " + split.joined(separator: ", ")))
        if !rampsFound.isEmpty || !rampsMissed.isEmpty {
            print("  songs whose notes say they ramp: \(rampsFound.count) of \(rampsFound.count + rampsMissed.count) found changing"
                  + (rampsFound.isEmpty ? "" : ": " + rampsFound.joined(separator: ", ")) + (rampsMissed.isEmpty ? "" : "; missed: " + rampsMissed.joined(separator: ", ")))
        }
        print("Calibration (confidence band: songs right at Acc1 / songs in the band):")
        for label in calibration.keys.sorted() {
            print("  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + calibration[label]!.text)
        }
        for failure in failures { print("  failed: \(failure)") }
    }

    // MARK: Speed

    private func measureSpeed() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-speed")
        let path = directory.file("three-minutes.mp3")
        let seconds = 180.0
        let left = Synth.drumPattern(bpm: 123, seconds: seconds, sampleRate: 44_100, pattern: .backbeat)
        let right = Synth.drumPattern(bpm: 123, seconds: seconds, sampleRate: 44_100, pattern: .backbeat, seed: 11)
        try AudioFileWriter(.mp3(.constant)).write([left, right], sampleRate: 44_100, to: path)

        let decode = try bestOfThree {
            let stream = try AudioStream(.file(path))
            try stream.readToEnd()
        }
        print("Speed on a 3-minute 44.1 kHz stereo MP3 (best of 3, one thread): decode \(format(decode, seconds))")
        let decoded = try DecodedAudio(decoding: .file(path))
        let rate = Double(decoded.metadata.sampleRate)
        let registry = BuiltinDetectors.registry
        for name in registry.names {
            let detector = try registry.make(name)
            // The target counts the detector's own work on one core: CPU time of this thread, so
            // that other processes on a busy machine do not count.
            var detectorCPU = Double.infinity
            for _ in 0..<3 {
                let start = Self.threadCPUSeconds()
                _ = detector.analyze(decoded.samples, sampleRate: rate)
                detectorCPU = min(detectorCPU, Self.threadCPUSeconds() - start)
            }
            let analyzer = SongAnalyzer(detectors: [detector])
            let total = try bestOfThree {
                let result = analyzer.analyze(.file(path))
                if let error = result.error { throw error }
            }
            let target = Self.cpuTargets[name] ?? 0.05
            let verdict = detectorCPU < target ? "meets" : "misses"
            print("  \(name) default: detector \(String(format: "%.3f", detectorCPU)) s of CPU (\(verdict) the \(target) s target); "
                  + "with decode \(format(total, seconds)) wall")
        }
        measureBeatGrid(decoded.samples, sampleRate: rate)
    }

    /// The beat grid's own work on the song: its onset bands read from spectral frames another
    /// accumulator computes (two accumulators sharing frames, less one alone) and the fit.
    private func measureBeatGrid(_ samples: [Float], sampleRate: Double) {
        func onsets(_ count: Int) -> (OnsetStrengthEnvelope, Double) {
            var best = Double.infinity
            var envelope: OnsetStrengthEnvelope?
            for _ in 0..<3 {
                let start = Self.threadCPUSeconds()
                let frames = SharedFrontEnds()
                let accumulators = (0..<count).map { _ in
                    OnsetStrengthAccumulator(
                        sampleRate: sampleRate, configuration: BeatGridFit.configuration, frontEnds: frames, expectedSamples: samples.count)
                }
                samples.forEachBlock(of: 4096) { block in accumulators.forEach { $0.consume(block) } }
                envelope = accumulators.map { $0.finish() }.last
                best = min(best, Self.threadCPUSeconds() - start)
            }
            return (envelope!, best)
        }
        let (envelope, one) = onsets(1)
        let (_, two) = onsets(2)
        var fit = Double.infinity
        var grid: BeatGrid?
        for _ in 0..<3 {
            let start = Self.threadCPUSeconds()
            grid = BeatGridFit.fit(envelope, bpm: 123.4)
            fit = min(fit, Self.threadCPUSeconds() - start)
        }
        print(String(format: "  beat grid: onset bands %.4f s + fit %.4f s of CPU (%@)", max(two - one, 0), fit,
                     grid.map { String(format: "%.3f BPM from %.3f s", $0.bpm, $0.firstBeatS) } ?? "no grid"))
    }

    /// CPU targets on a 3-minute song other than the DSP detectors' 0.05 s: a neural network's
    /// activation with its tempo and beat inference is 0.25 s (issue 28).
    static let cpuTargets = ["beatnet": 0.25]

    /// CPU seconds this thread has used.
    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private func bestOfThree(_ body: () throws -> Void) throws -> Double {
        var best = Double.infinity
        for _ in 0..<3 {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return best
    }

    private func format(_ elapsed: Double, _ audioSeconds: Double) -> String {
        String(format: "%.3f s (%.0fx real time)", elapsed, audioSeconds / max(elapsed, 1e-9))
    }

    // MARK: Memory

    /// VmHWM of /proc/self/status, in MB.
    static func peakResidentMegabytes() throws -> Double {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(separator: " ")
            if fields.count >= 2, let kilobytes = Double(fields[1]) { return kilobytes / 1024 }
        }
        throw Truth.Malformed(description: "/proc/self/status: no VmHWM line")
    }

    /// Analyses a 20-minute song in a fresh process (this benchmark run with `--memory-probe`),
    /// which reports its own peak resident memory: VmHWM belongs to the process image, so the
    /// memory of this process (the synthesised song) does not count.
    private func measureMemory() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-bench-memory")
        let path = directory.file("twenty-minutes.flac")
        let rate = 22_050.0
        let loop = Synth.drumPattern(bpm: 128, seconds: 60, sampleRate: rate, pattern: .fourOnTheFloor)
        try AudioFileWriter(.flac).write([Array([[Float]](repeating: loop, count: 20).joined())], sampleRate: Int(rate), to: path)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["accuracy", "--memory-probe", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print("Memory: analysing a 20-minute song (every detector, default presets) in a fresh process: "
              + report.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `--memory-probe FILE`: analyse the file as `tactus analyze` does and print the peak
    /// resident memory of this process.
    private func probeMemory(_ path: String) throws {
        let result = SongAnalyzer.builtin().analyze(.file(path))
        let megabytes = try Self.peakResidentMegabytes()
        let verdict = megabytes < 150 ? "meets" : "misses"
        let tempo = result.consensus.bpm ?? 0
        let seconds = result.durationSeconds ?? 0
        let figures = String(format: "peak resident %.1f MB (VmHWM); %.0f s of audio, tempo %.1f", megabytes, seconds, tempo)
        print(figures + " (\(verdict) the 150 MB target)")
        if let error = result.error { print("error: \(error.message)") }
    }
}

/// The reference tempi of a corpus: `truth.csv` with at least the columns file, bpm and style.
struct Truth {
    struct Song {
        var file: String
        var bpm: Double
        var style: String
        /// The notes say the tempo ramps (the corpora's README: "ramp" where relevant).
        var ramps = false
    }

    let songs: [Song]

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    init(csv path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let rows = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        guard let header = rows.first,
            let file = header.firstIndex(of: "file"), let bpm = header.firstIndex(of: "bpm"), let style = header.firstIndex(of: "style")
        else { throw Malformed(description: "\(path): expected a header with file, bpm and style") }
        songs = try rows.dropFirst().map { row in
            guard row.count > max(file, bpm, style), let tempo = Double(row[bpm]) else {
                throw Malformed(description: "\(path): malformed row \(row.joined(separator: ","))")
            }
            let notes = header.firstIndex(of: "notes").map { row.dropFirst($0).joined(separator: ",") } ?? ""
            return Song(file: row[file], bpm: tempo, style: row[style], ramps: notes.contains("ramp "))
        }
    }
}
