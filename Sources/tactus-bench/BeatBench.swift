import ArgumentParser
import Foundation
import TactusAnalysis
import TactusDetector

/// `tactus-bench beats`: the beats of every detector that tracks them, scored against the
/// annotated beats of a corpus (`beats/<stem>.txt`, one time in seconds a line) with the
/// MIREX measures (``BeatScore``), per song and as means over the corpus.
struct BeatBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beats",
        abstract: "Beat F-measure (+-70 ms), CMLt and AMLt of every beat-tracking detector against a corpus's annotated beats.",
        discussion: """
            Every song of the corpus (truth.csv) is analysed by every detector in its default \
            preset; the songs with a constant beat grid (fitted at the consensus tempo), and those \
            whose grid's tempo is within 0.05 % of the truth, are counted. For every song that has \
            beats/<stem>.txt, each analysis that carries beats is scored, and so is the constant \
            grid ("constant grid"), the first 5 s left out (MIREX). Targets on ../shared/corpus/real: mean F-measure >= 0.90 and \
            CMLt >= 0.85.
            """
    )

    @Option(help: ArgumentHelp("Directory with the songs, truth.csv and beats/.", valueName: "path"))
    var corpus = "../shared/corpus/real"

    /// How the consensus' constant beat grid is named among the detectors.
    static let gridSource = "constant grid"

    @Flag(help: "Print each song's scores.")
    var verbose = false

    @Flag(help: "Print one JSON object with every figure (the songs' scores with them).")
    var json = false

    @OptionGroup var detectorSettings: DetectorSettingsOption

    /// Every figure of a run.
    struct Report: Encodable {
        var corpus: String
        var songs: Int
        /// Songs with a constant beat grid, and those whose grid's tempo is within 0.05 % of the truth (or an octave of it).
        var grids_fitted: Int
        var grids_exact: Int
        /// Each beat source (a detector, or the constant grid) with its means over the songs, in the order first met.
        var sources: [Source]
        var song_scores: [SongScore]
    }

    /// The means of one beat source over the songs it gave beats for.
    struct Source: Encodable {
        var name: String
        var songs: Int
        var f_measure: Double
        var cmlt: Double
        var amlt: Double
    }

    /// One source's beats of one song, scored.
    struct SongScore: Encodable {
        var file: String
        var source: String
        var truth_bpm: Double
        /// The tempo of the source's beats (the grid's, or the detector's).
        var bpm: Double
        var f_measure: Double
        var cmlt: Double
        var amlt: Double
    }

    func run() throws {
        let report = try measure()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        if verbose {
            for score in report.song_scores {
                print(String(format: "%@ %@ %.1f: F %.3f CMLt %.3f AMLt %.3f (tempo %.2f)", score.file, score.source, score.truth_bpm,
                             score.f_measure, score.cmlt, score.amlt, score.bpm))
            }
        }
        print("Constant beat grids: \(report.grids_fitted) of \(report.songs) songs have one; its tempo is within 0.05 % of the truth (or an octave of it) on \(report.grids_exact)")
        print("Beats on \(corpus) (F-measure +-70 ms, CMLt, AMLt; first 5 s left out; means over songs):")
        for source in report.sources {
            print(String(format: "  %@ (%d songs): F %.3f  CMLt %.3f  AMLt %.3f", source.name, source.songs,
                         source.f_measure, source.cmlt, source.amlt))
        }
    }

    /// Analyses and scores every song of the corpus; with `--verbose` (and no `--json`), prints
    /// how each song's grid came out as it goes.
    private func measure() throws -> Report {
        let truth = try Truth(csv: corpus + "/truth.csv")
        let analyzer = try detectorSettings.analyzer()
        var scores: [SongScore] = []
        var order = [String]()
        var grids = (fitted: 0, exact: 0)
        let note = { (text: String) in if verbose && !json { print(text) } }
        for song in truth.songs {
            let stem = (song.file as NSString).deletingPathExtension
            let result = analyzer.analyze(.file(corpus + "/" + song.file))
            if let error = result.error { FileHandle.standardError.write(Data("  \(song.file) failed: \(error.message)\n".utf8)) }
            if let grid = result.beatGrid {
                grids.fitted += 1
                // The grid's tempo against the truth, at the octave nearest it.
                let ratio = grid.bpm / song.bpm
                let exact = abs(ratio / pow(2, log2(ratio).rounded()) - 1) <= 0.0005
                if exact { grids.exact += 1 }
                note(String(format: "%@ grid %.3f BPM from %.3f s, clarity %.2f (truth %.3f)%@", song.file, grid.bpm, grid.firstBeatS,
                            grid.clarity, song.bpm, exact ? "" : ": not within 0.05 %"))
            } else {
                note("\(song.file): no grid (consensus \(result.consensus.bpm.map { String(format: "%.2f", $0) } ?? "none"))")
            }
            let path = corpus + "/beats/" + stem + ".txt"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let annotated = text.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            var tracked = result.analyses.compactMap { analysis in
                analysis.beats.map { (source: analysis.detector, times: $0.times, bpm: analysis.bpm ?? 0) }
            }
            if let grid = result.beatGrid, let duration = result.durationSeconds {
                tracked.append((Self.gridSource, grid.beats(until: duration), grid.bpm))
            }
            for beats in tracked {
                let score = BeatScore(estimated: beats.times, annotated: annotated)
                if !order.contains(beats.source) { order.append(beats.source) }
                scores.append(
                    SongScore(
                        file: song.file, source: beats.source, truth_bpm: song.bpm, bpm: beats.bpm, f_measure: score.fMeasure,
                        cmlt: score.cmlt, amlt: score.amlt))
            }
        }
        let sources = order.map { name in
            let list = scores.filter { $0.source == name }
            let mean = { (value: (SongScore) -> Double) in list.map(value).reduce(0, +) / Double(max(list.count, 1)) }
            return Source(name: name, songs: list.count, f_measure: mean(\.f_measure), cmlt: mean(\.cmlt), amlt: mean(\.amlt))
        }
        return Report(
            corpus: corpus, songs: truth.songs.count, grids_fitted: grids.fitted, grids_exact: grids.exact, sources: sources,
            song_scores: scores)
    }
}
