import ArgumentParser
import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
import TactusStretch
import TactusTestSupport

/// `tactus-bench stretch-invariance`: whether each detector and the consensus keep their
/// metrical level when a song is played a few per cent faster or slower (issue 29).
struct StretchInvarianceBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stretch-invariance",
        abstract: "Songs stretched by ±4 % (pitch kept) analysed again: how many change metrical level, per detector and consensus.",
        discussion: """
            Every song of each corpus (truth.csv: file, bpm, ..., style) is stretched by each \
            --factor with the project's Rubber Band wrapper (`TimeStretcher`, the faster engine, \
            pitch kept, as `tactus stretch` does; 1.04 plays 4 % faster), written as mono 32-bit \
            float WAV into --cache (kept between runs; float, because some songs are very quiet), and the original and every stretched version \
            are analysed by every built-in detector (default presets) and the consensus. A \
            reading "changes level" when its stretched tempo divided by its original tempo and \
            by the factor is not within 4 % of 1 (or when only one of the two has a tempo). \
            Printed per corpus, detector and factor: how many songs change level (and how many \
            of them were right at Acc1 before), which, and Acc1 of the stretched versions \
            against the reference tempo times the factor. Target: no change for the consensus. \
            Songs are analysed two at a time (one per core).
            """)

    @Option(help: ArgumentHelp("Directory with the songs and truth.csv (repeat for several corpora).", valueName: "path"))
    var corpus: [String] = ["../shared/corpus/dev", "../shared/corpus/real"]

    @Option(help: "Tempo factors to stretch by (repeatable; 1.04: 4 % faster).")
    var factor: [Double] = [0.96, 1.04]

    @Option(help: ArgumentHelp("Directory for the stretched songs, reused by later runs.", valueName: "path"))
    var cache = FileManager.default.temporaryDirectory.path + "/tactus-bench-stretched"

    @OptionGroup var detectorSettings: DetectorSettingsOption

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Flag(help: "Print every song's readings and, for each reading that changes level, the candidates on both sides.")
    var verbose = false

    func validate() throws {
        guard factor.allSatisfy({ (0.5...2).contains($0) && $0 != 1 }) else {
            throw ValidationError("--factor must be in 0.5...2 and not 1.")
        }
    }

    func run() throws {
        let reports = try corpus.map(measure)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(reports), as: UTF8.self))
        } else {
            for report in reports { print(report.text(verbose: verbose)) }
        }
    }

    // MARK: Measuring

    /// What one detector (or the consensus) read on one version of a song.
    struct Reading: Codable {
        var bpm: Double?
        var confidence: Double
        var candidates: [TempoCandidate]
    }

    /// One song: its reference tempo and, per version (`1` the original, then each factor's
    /// stretch, keyed by ``versionKey(_:)``), every label's reading.
    struct SongReadings: Codable {
        var file: String
        var bpm: Double
        var readings: [String: [String: Reading]]
    }

    /// How one label fares under one factor.
    struct LevelChanges: Codable {
        var factor: Double
        /// Songs whose reading changed level.
        var changed: [String]
        /// Of those, the songs the original reading had right (Acc1).
        var changedFromRight: [String]
        /// Songs whose stretched reading is within 4 % of the reference tempo times the factor.
        var stretchedAcc1: Int
        var originalAcc1: Int

        enum CodingKeys: String, CodingKey {
            case factor, changed, changedFromRight = "changed_from_right", stretchedAcc1 = "stretched_acc1"
            case originalAcc1 = "original_acc1"
        }
    }

    struct CorpusReport: Codable {
        var corpus: String
        var songs: Int
        var failures: [String]
        /// Per label (detector name, or "consensus"), per factor.
        var labels: [String: [LevelChanges]]
        var readings: [SongReadings]

        func text(verbose: Bool) -> String {
            var lines = ["Stretch invariance on \(songs) songs of \(corpus) (changes of metrical level; Acc1 original -> stretched):"]
            let width = labels.keys.map(\.count).max() ?? 0
            for label in labels.keys.sorted(by: StretchInvarianceBench.labelOrder) {
                for change in labels[label] ?? [] {
                    let percent = { (count: Int) in String(format: "%5.1f %%", 100 * Double(count) / Double(max(songs, 1))) }
                    var line = "  " + label.padding(toLength: width, withPad: " ", startingAt: 0)
                        + String(format: "  x%.2f: %2d change", change.factor, change.changed.count)
                        + " (\(change.changedFromRight.count) right before); Acc1 \(percent(change.originalAcc1)) -> \(percent(change.stretchedAcc1))"
                    if !change.changed.isEmpty { line += ": " + change.changed.joined(separator: ", ") }
                    lines.append(line)
                }
            }
            if verbose {
                for song in readings {
                    lines.append("  \(song.file) (\(song.bpm)):")
                    for label in (song.readings[versionKey(1)] ?? [:]).keys.sorted(by: StretchInvarianceBench.labelOrder) {
                        let versions = song.readings.keys.sorted { Double($0)! < Double($1)! }
                        let shown = versions.map { key in
                            let reading = song.readings[key]?[label]
                            let candidates = (reading?.candidates ?? []).map { String(format: "%.1f:%.2f", $0.bpm, $0.strength) }
                            return "x\(key) " + (reading?.bpm.map { String(format: "%.1f", $0) } ?? "-")
                                + String(format: " c%.2f", reading?.confidence ?? 0) + " [" + candidates.joined(separator: " ") + "]"
                        }
                        lines.append("    " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + shown.joined(separator: " | "))
                    }
                }
            }
            for failure in failures { lines.append("  failed: \(failure)") }
            return lines.joined(separator: "\n")
        }
    }

    static let consensusLabel = "consensus"

    /// Detectors by name, the consensus last.
    static func labelOrder(_ a: String, _ b: String) -> Bool {
        (a == consensusLabel ? 1 : 0, a) < (b == consensusLabel ? 1 : 0, b)
    }

    static func versionKey(_ factor: Double) -> String { String(format: "%.3f", factor) }

    private func measure(_ corpus: String) throws -> CorpusReport {
        let truth = try Truth(csv: corpus + "/truth.csv")
        let directory = cache + "/" + URL(fileURLWithPath: corpus).standardizedFileURL.lastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let analyzer = try detectorSettings.analyzer()
        let advisory = BuiltinDetectors.registry.advisoryNames
        let results = Locked<[Int: SongReadings]>([:])
        let failures = ErrorLog()
        let factors = factor
        DispatchQueue.concurrentPerform(iterations: truth.songs.count) { index in
            let song = truth.songs[index]
            let original = corpus + "/" + song.file
            do {
                var readings: [String: [String: Reading]] = [:]
                let versions = try [(1.0, original)] + factors.map { ($0, try Self.stretched(original, by: $0, into: directory)) }
                for (factor, path) in versions {
                    let result = analyzer.analyze(.file(path))
                    if let error = result.error { throw BenchFailure(error.message) }
                    var byLabel: [String: Reading] = [:]
                    for analysis in result.analyses {
                        byLabel[analysis.detector] = Reading(bpm: analysis.bpm, confidence: analysis.confidence, candidates: analysis.candidates)
                    }
                    let consensus = Consensus.of(result.analyses, advisory: advisory)
                    byLabel[Self.consensusLabel] = Reading(bpm: consensus.bpm, confidence: consensus.confidence ?? 0, candidates: [])
                    readings[Self.versionKey(factor)] = byLabel
                }
                results.withLock { $0[index] = SongReadings(file: song.file, bpm: song.bpm, readings: readings) }
            } catch {
                failures.add("\(original): \(error)")
            }
        }
        let songs = results.withLock { dictionary in dictionary.keys.sorted().compactMap { dictionary[$0] } }
        var labels: [String: [LevelChanges]] = [:]
        let names = Set(songs.flatMap { $0.readings[Self.versionKey(1)]?.keys.map { $0 } ?? [] })
        for label in names {
            labels[label] = factors.map { factor in
                var change = LevelChanges(factor: factor, changed: [], changedFromRight: [], stretchedAcc1: 0, originalAcc1: 0)
                for song in songs {
                    let before = song.readings[Self.versionKey(1)]?[label]?.bpm
                    let after = song.readings[Self.versionKey(factor)]?[label]?.bpm
                    let right = TempoRelation.acc1(before, song.bpm)
                    if right { change.originalAcc1 += 1 }
                    if TempoRelation.acc1(after, song.bpm * factor) { change.stretchedAcc1 += 1 }
                    if Self.changesLevel(before, after, factor: factor) {
                        change.changed.append(song.file)
                        if right { change.changedFromRight.append(song.file) }
                    }
                }
                return change
            }
        }
        return CorpusReport(corpus: corpus, songs: truth.songs.count, failures: failures.all, labels: labels, readings: songs)
    }

    /// Whether `after` (read on the song stretched by `factor`) is on another metrical level than
    /// `before`: after / (before × factor) not within 4 % of 1, or only one of them a tempo.
    static func changesLevel(_ before: Double?, _ after: Double?, factor: Double) -> Bool {
        switch (before, after) {
        case (nil, nil): false
        case (let before?, let after?): !TempoRelation.matches(after, before * factor)
        default: true
        }
    }

    /// The path of `file` stretched by `factor` in `directory`, made (mono float WAV, through a
    /// partial file renamed into place) when not there yet. Float: some songs peak far below
    /// 16-bit resolution (quiet recordings are still music).
    private static func stretched(_ file: String, by factor: Double, into directory: String) throws -> String {
        let stem = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let path = "\(directory)/\(stem)-x\(versionKey(factor)).wav"
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let decoded = try DecodedAudio(decoding: .file(file))
        let samples = TimeStretcher.stretch(decoded.samples, sampleRate: decoded.sampleRate, tempoRatio: factor)
        let partial = path + ".partial"
        try AudioFileWriter(.wavFloat).write([samples], sampleRate: decoded.sampleRate, to: partial)
        try FileManager.default.moveItem(atPath: partial, toPath: path)
        return path
    }
}
