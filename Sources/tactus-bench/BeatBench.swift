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

    @OptionGroup var detectorSettings: DetectorSettingsOption

    func run() throws {
        let truth = try Truth(csv: corpus + "/truth.csv")
        let analyzer = try detectorSettings.analyzer()
        var scores = [String: [BeatScore]]()
        var order = [String]()
        var grids = (fitted: 0, exact: 0)
        for song in truth.songs {
            let stem = (song.file as NSString).deletingPathExtension
            let result = analyzer.analyze(.file(corpus + "/" + song.file))
            if let error = result.error { print("  failed: \(error.message)") }
            if let grid = result.beatGrid {
                grids.fitted += 1
                // The grid's tempo against the truth, at the octave nearest it.
                let ratio = grid.bpm / song.bpm
                let exact = abs(ratio / pow(2, log2(ratio).rounded()) - 1) <= 0.0005
                if exact { grids.exact += 1 }
                if verbose {
                    print(String(format: "%@ grid %.3f BPM from %.3f s, clarity %.2f (truth %.3f)%@", song.file, grid.bpm, grid.firstBeatS,
                                 grid.clarity, song.bpm, exact ? "" : ": not within 0.05 %"))
                }
            } else if verbose {
                print("\(song.file): no grid (consensus \(result.consensus.bpm.map { String(format: "%.2f", $0) } ?? "none"))")
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
                if scores[beats.source] == nil { order.append(beats.source) }
                scores[beats.source, default: []].append(score)
                if verbose {
                    print(String(format: "%@ %@ %.1f: F %.3f CMLt %.3f AMLt %.3f (tempo %.2f)", song.file, beats.source, song.bpm,
                                 score.fMeasure, score.cmlt, score.amlt, beats.bpm))
                }
            }
        }
        print("Constant beat grids: \(grids.fitted) of \(truth.songs.count) songs have one; its tempo is within 0.05 % of the truth (or an octave of it) on \(grids.exact)")
        print("Beats on \(corpus) (F-measure +-70 ms, CMLt, AMLt; first 5 s left out; means over songs):")
        for name in order {
            let list = scores[name] ?? []
            let mean = { (value: (BeatScore) -> Double) in list.map(value).reduce(0, +) / Double(max(list.count, 1)) }
            print(String(format: "  %@ (%d songs): F %.3f  CMLt %.3f  AMLt %.3f", name, list.count,
                         mean(\.fMeasure), mean(\.cmlt), mean(\.amlt)))
        }
    }
}
