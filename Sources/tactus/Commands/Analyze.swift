import ArgumentParser
import Foundation
import Logging
import TactusAnalysis
import TactusAudio
import TactusAudioProbe
import TactusDetector
import TactusModel
import TactusStore

extension Tactus {
    /// `tactus analyze FILE...`: decodes each file once and runs the chosen detectors on it.
    struct Analyze: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "analyze",
            abstract: "Find the tempo of audio files with every detector (or the chosen ones).",
            discussion: """
                Each file is decoded once; every chosen detector analyses the whole song in the \
                same pass. For each file: a table of detector, BPM, confidence, top candidates and \
                time, then the consensus of the detectors. `tactus detectors` lists the detectors \
                and their parameters.

                With --json, one JSON object per file and per line, with the fields file, song, \
                duration_s, error (null or {code, message}), analyses (array of {detector, \
                version, params, bpm, reason, confidence, candidates [{bpm, strength}], windows \
                [{start_s, duration_s, energy, bpm, strength}], beats ({times, downbeats?} seconds, from detectors that track \
                beats: beatnet), seconds}), envelope ({hop_s, \
                values}, only with --envelope), consensus ({bpm, detectors}) and warnings.

                With --db, each analysed song is also stored in that library file (created if \
                missing), the song and all its analyses in one transaction, replacing earlier \
                analyses with the same detector version and parameters; `tactus query`, \
                `compare` and `playlist` then find it. A file that cannot be decoded is reported \
                and not stored.

                A folder stands for every audio file under it, searched as `tactus submit` searches \
                (audio recognised by content, in name order); its other files are listed as \
                FILE  skipped: CODE: MESSAGE (with --json, {file, skipped {code, message}}).

                Exit status: 0 when every file was analysed (and stored), 1 when any failed, 2 on \
                usage errors.
                """
        )

        @Argument(help: ArgumentHelp("The audio files to analyse (folders: every audio file under them).", valueName: "path"))
        var files: [String]

        @Option(name: .customLong("detector"), help: ArgumentHelp(
            "Run this detector (repeatable; by default every detector that votes in the consensus, so beatnet runs only when named).", valueName: "name"))
        var detectorNames: [String] = []

        @Option(name: .customLong("param"), help: ArgumentHelp(
            "Set a detector parameter, for example comb-filter.preset=classic (repeatable).",
            valueName: "name.key=value"))
        var parameters: [String] = []

        @Flag(help: "Include the song's energy envelope (mean squared amplitude per 23.2 ms) in the JSON output.")
        var envelope = false

        @Flag(help: "Print one JSON object per file and per line (JSON Lines).")
        var json = false

        @Option(name: .customLong("db"), help: ArgumentHelp(
            "Also store the results in this library file (SQLite, created if missing).", valueName: "path"))
        var databasePath: String?

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("Give at least one file to analyse.") }
            _ = try DetectorChoice(names: detectorNames, parameters: parameters)
        }

        func run() throws {
            AnalysisHeap.configure()
            let analyzer = SongAnalyzer(detectors: try DetectorChoice(names: detectorNames, parameters: parameters).detectors)
            let library = try databasePath.map { try LibraryOptions.open($0, .create) }
            let logger = Logger(label: "tactus.analyze")
            var failures = 0
            let found = Self.expanding(files)
            for file in found.files {
                var result = analyzer.analyze(.file(file))
                result.includesEnvelopeInJSON = envelope
                var stored: String?
                if let error = result.error {
                    failures += 1
                    logger.error("\(error.message)", metadata: ["file": "\(file)", "code": "\(error.code)"])
                } else if let library, let databasePath {
                    do {
                        let (song, analyses) = try StoredSong.records(of: result, file: file)
                        _ = try library.record(song, analyses: analyses)
                        stored = databasePath
                    } catch {
                        failures += 1
                        logger.error("not stored: \(error)", metadata: ["file": "\(file)", "db": "\(databasePath)"])
                    }
                }
                if json {
                    print(jsonLine: AnalysisText.jsonLine(result))
                } else {
                    print(lines: AnalysisText.table(result) + (stored.map { ["  stored in \($0)"] } ?? []))
                }
            }
            for skipped in found.skipped {
                if json {
                    try Output.jsonLine(SkippedFile(file: skipped.file, skipped: .init(code: skipped.code, message: skipped.message)))
                } else {
                    print("\(skipped.file)  skipped: \(skipped.code): \(skipped.message)")
                }
            }
            if failures > 0 { throw ExitCode.failure }
        }

        /// The files named, each folder replaced by the audio files under it (in name order),
        /// and the files of those folders that are not analysed, with why.
        static func expanding(_ paths: [String]) -> (files: [String], skipped: [AudioFiles.Problem]) {
            var files = [String]()
            var skipped = [AudioFiles.Problem]()
            for path in paths {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    files.append(path)
                    continue
                }
                let found = AudioFiles.find([path])
                files += found.files
                skipped += found.skipped
            }
            return (files, skipped)
        }

        /// A file of a folder that is not analysed, as a JSON line.
        struct SkippedFile: Encodable {
            struct Reason: Encodable {
                var code: ErrorCode
                var message: String
            }

            var file: String
            var skipped: Reason
        }
    }
}

/// What the library keeps of an analysed song: its record, filled from the decoded file,
/// and one analysis record per detector.
enum StoredSong {
    /// The records of `analysis`, a song analysed without error from `file`.
    static func records(of analysis: SongAnalysis, file: String) throws -> (SongRecord, [AnalysisRecord]) {
        guard let id = analysis.song, let metadata = analysis.metadata else {
            throw CommandFailure("\(file): the analysis has no song id or metadata to store")
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: file)
        } catch {
            throw CommandFailure("\(file): cannot read its size: \(error.localizedDescription)")
        }
        guard let byteSize = (attributes[.size] as? NSNumber)?.intValue else {
            throw CommandFailure("\(file): the file system reports no size")
        }
        let song = SongRecord(
            id: id, fileName: (file as NSString).lastPathComponent, byteSize: byteSize, metadata: metadata,
            envelope: analysis.envelope, beatGrid: analysis.beatGrid)
        return (song, analysis.analyses.map { AnalysisRecord($0) })
    }
}

/// The detectors chosen on the command line, with their parameters resolved and validated.
struct DetectorChoice {
    let detectors: [any TempoDetector]

    /// `names` are `--detector` values (when empty, every registered detector that votes in the
    /// consensus: advisory ones run only when named); `parameters` are
    /// `--param NAME.KEY=VALUE` values. Every problem is a usage error naming the culprit.
    init(names: [String], parameters: [String], registry: DetectorRegistry = BuiltinDetectors.registry) throws {
        for name in names where registry.descriptor(named: name) == nil {
            throw ValidationError(ParameterError.unknownDetector(name: name, known: registry.names).description)
        }
        var chosen: [String] = []
        for name in names.isEmpty ? registry.defaultNames : names where !chosen.contains(name) {
            chosen.append(name)
        }
        var assignments: [String: [String]] = [:]
        for parameter in parameters {
            guard let assignment = ParameterAssignment(parsing: parameter) else {
                throw ValidationError("--param '\(parameter)': expected NAME.KEY=VALUE, for example comb-filter.preset=classic")
            }
            let name = assignment.detector
            guard registry.descriptor(named: name) != nil else {
                throw ValidationError(
                    "--param '\(parameter)': " + ParameterError.unknownDetector(name: name, known: registry.names).description)
            }
            guard chosen.contains(name) else {
                throw ValidationError("--param '\(parameter)': detector '\(name)' is not among the chosen detectors (\(chosen.joined(separator: ", ")))")
            }
            assignments[name, default: []].append(assignment.keyValue)
        }
        do throws(ParameterError) {
            detectors = try chosen.map { name throws(ParameterError) in
                let resolved = try registry.descriptor(named: name)!.resolve(assignments: assignments[name] ?? [])
                return try registry.make(name, parameters: resolved)
            }
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// How `analyze` prints a song's analysis.
enum AnalysisText {
    /// The analysis as one line of JSON with sorted keys.
    static func jsonLine(_ analysis: SongAnalysis) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(analysis), as: UTF8.self)
        } catch {
            // Only a non-finite number can fail; report it rather than print half a line.
            let problem = SongAnalysis(
                file: analysis.file, song: analysis.song,
                error: AnalysisProblem(code: .internal, message: "\(analysis.file): result not encodable: \(error)"))
            return String(decoding: (try? encoder.encode(problem)) ?? Data("{}".utf8), as: UTF8.self)
        }
    }

    /// The analysis as a table: the file and its audio, one row per detector, the consensus.
    static func table(_ analysis: SongAnalysis) -> [String] {
        var lines = [analysis.file]
        if let metadata = analysis.metadata, analysis.error == nil {
            lines.append(
                "  \(metadata.format), \(metadata.sampleRate) Hz, \(metadata.channels) channel\(metadata.channels == 1 ? "" : "s"), "
                    + String(format: "%.1f s, decoded in %.3f s", metadata.duration, analysis.decodeSeconds))
        }
        if let song = analysis.song { lines.append("  song \(song)") }
        for warning in analysis.warnings { lines.append("  warning [\(warning.code)] \(warning.message)") }
        if let error = analysis.error {
            lines.append("  error [\(error.code)] \(error.message)")
            return lines
        }
        let header = ["detector", "BPM", "conf", "candidates", "time"]
        var rows = [header]
        for result in analysis.analyses {
            rows.append([
                result.detector,
                result.bpm.map { String(format: "%.2f", $0) } ?? "-",
                String(format: "%.2f", result.confidence),
                result.bpm == nil
                    ? (result.reason ?? "no tempo")
                    : result.candidates.map { String(format: "%.1f (%.2f)", $0.bpm, $0.strength) }.joined(separator: ", "),
                String(format: "%.3f s", result.seconds),
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            lines.append("  " + cells.joined(separator: "  "))
        }
        for result in analysis.analyses {
            if let beats = result.beats { lines.append("  beats (\(result.detector)): " + Output.beats(beats)) }
        }
        let consensus = analysis.consensus
        let agreeing = consensus.detectors.isEmpty ? "no detector's own tempo" : consensus.detectors.joined(separator: ", ")
        let confidence = consensus.confidence.map { String(format: ", confidence %.2f", $0) } ?? ""
        lines.append(
            "  consensus: " + (consensus.bpm.map { String(format: "%.2f BPM", $0) + "\(confidence) (\(agreeing))" } ?? "no tempo"))
        if let map = consensus.tempoMap { lines.append("  " + Output.tempoMap(map)) }
        if let grid = analysis.beatGrid { lines.append("  " + Output.beatGrid(grid)) }
        return lines
    }
}
