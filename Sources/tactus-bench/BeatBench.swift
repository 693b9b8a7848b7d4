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
            Every song of the corpus (truth.csv) that has beats/<stem>.txt is analysed by every \
            detector in its default preset; each analysis that carries beats is scored, the first \
            5 s left out (MIREX). Targets on ../shared/corpus/real: mean F-measure >= 0.90 and \
            CMLt >= 0.85.
            """
    )

    @Option(help: ArgumentHelp("Directory with the songs, truth.csv and beats/.", valueName: "path"))
    var corpus = "../shared/corpus/real"

    @Flag(help: "Print each song's scores.")
    var verbose = false

    func run() throws {
        let truth = try Truth(csv: corpus + "/truth.csv")
        let registry = BuiltinDetectors.registry
        let analyzer = SongAnalyzer(detectors: try registry.names.map { try registry.make($0) })
        var scores = [String: [BeatScore]]()
        var order = [String]()
        for song in truth.songs {
            let stem = (song.file as NSString).deletingPathExtension
            let path = corpus + "/beats/" + stem + ".txt"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let annotated = text.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            let result = analyzer.analyze(.file(corpus + "/" + song.file))
            if let error = result.error { print("  failed: \(error.message)") }
            for analysis in result.analyses {
                guard let beats = analysis.beats else { continue }
                let score = BeatScore(estimated: beats.times, annotated: annotated)
                if scores[analysis.detector] == nil { order.append(analysis.detector) }
                scores[analysis.detector, default: []].append(score)
                if verbose {
                    print(String(format: "%@ %@ %.1f: F %.3f CMLt %.3f AMLt %.3f (tempo %.1f)", song.file, analysis.detector, song.bpm,
                                 score.fMeasure, score.cmlt, score.amlt, analysis.bpm ?? 0))
                }
            }
        }
        print("Beats on \(corpus) (F-measure +-70 ms, CMLt, AMLt; first 5 s left out; means over songs):")
        for name in order {
            let list = scores[name] ?? []
            let mean = { (value: (BeatScore) -> Double) in list.map(value).reduce(0, +) / Double(max(list.count, 1)) }
            print(String(format: "  %@ (%d songs): F %.3f  CMLt %.3f  AMLt %.3f", name, list.count,
                         mean(\.fMeasure), mean(\.cmlt), mean(\.amlt)))
        }
    }
}
