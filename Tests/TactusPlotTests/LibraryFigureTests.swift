import Foundation
import TactusPlot
import TactusStore
import TactusTestSupport
import Testing

@Suite struct LibraryFigureTests {
    @Test func comparisonFigureHasTheMatrixTheAccuracyBarsAndTheHistogram() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let library = try Sample.library(in: directory)
        for n in 0..<6 { try library.setReference(90 + Double(n * 7 % 60), for: Sample.song(n).id) }
        let comparison = try library.compareLibrary()
        let root = try ParsedSVG.parse(LibraryFigure(comparison).document().render())

        // Three detectors: six off-diagonal cells, above the diagonal "within 4 %".
        let cells = root.all(class: "cell")
        #expect(cells.count == 6)
        let alphaBeta = try #require(cells.first { $0.attributes["data-pair"] == "alpha|beta" })
        let pair = try #require(comparison.agreements.first { $0.first == "alpha" && $0.second == "beta" })
        #expect(alphaBeta.allText.contains(String(format: "%.0f %%", pair.agree * 100)))
        #expect(alphaBeta.allText.contains("n = \(pair.songs)"))
        let betaAlpha = try #require(cells.first { $0.attributes["data-pair"] == "beta|alpha" })
        #expect(betaAlpha.allText.contains("100 %"), "beta is alpha or twice alpha: they agree up to an octave")

        let accuracy = root.all(class: "series")
        // The detectors, then the consensus measured the same way.
        #expect(accuracy.compactMap { $0.attributes["data-detector"] } == ["alpha", "beta", "gamma", "consensus"])
        for group in accuracy {
            #expect(group.children.filter { $0.name == "rect" }.count == 2, "an Acc1 and an Acc2 bar")
        }
        #expect(root.all(class: "legend-entry").count == 2)

        let bars = try #require(root.all(class: "histogram").first).children
        #expect(bars.map { $0.attributes["data-count"] } == comparison.histogram.map { "\($0.count)" })
        #expect(root.all(class: "note").isEmpty)
    }

    @Test func withoutReferenceTempiTheAccuracyChartSaysHowToSetThem() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let comparison = try Sample.library(in: directory, count: 3).compareLibrary()
        let root = try ParsedSVG.parse(LibraryFigure(comparison).document().render())
        #expect(root.all(class: "note").map(\.text) == ["no reference tempi (set them with `tactus truth`)"])
        #expect(root.all(class: "cell").count == 6)
    }

    @Test func anEmptyLibraryStillGivesAFigure() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let comparison = try Library(path: directory.file("empty.sqlite")).compareLibrary()
        let root = try ParsedSVG.parse(LibraryFigure(comparison).document().render())
        #expect(root.all(class: "note").count == 3)
    }
}
