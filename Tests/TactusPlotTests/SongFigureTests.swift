import Foundation
import TactusAnalysis
import TactusAudio
import TactusDetector
@testable import TactusPlot
import TactusStore
import TactusTestSupport
import Testing

@Suite struct SongFigureTests {
    /// The detector labels of the `series` groups inside `node`, in order.
    static func series(in node: ParsedSVG.Node) -> [String] {
        node.all(class: "series").compactMap { $0.attributes["data-detector"] }
    }

    @Test func figureHasAxesOneSeriesPerDetectorAndALegend() throws {
        let analyses = [Sample.analysis("alpha", bpm: 120), Sample.analysis("beta", bpm: 121), Sample.analysis("gamma", bpm: 60)]
        let plot = SongPlot(
            title: "Artist – Title <live>", subtitle: "song.flac", durationS: 180, envelope: Sample.envelope(), analyses: analyses,
            consensusBPM: 120.5, referenceBPM: 120)
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())

        #expect(root.all(class: "title").first?.text == "Artist – Title <live>")
        // Three charts, each with an x and a y axis and a title on each axis.
        #expect(root.all(class: "axis").count == 6)
        #expect(root.all(class: "x").count == 3 && root.all(class: "y").count == 3)
        #expect(root.all(class: "axis-title").map(\.text) == ["time (s)", "level (dB)", "time (s)", "tempo (BPM)", "tempo (BPM)", "strength"])
        // The tempo chart and the candidate chart: one series per detector each.
        #expect(Self.series(in: root) == ["alpha", "beta", "gamma", "alpha", "beta", "gamma"])
        let legend = root.all(class: "legend-entry").compactMap { $0.attributes["data-label"] }
        #expect(legend == [
            "alpha: 120.0 BPM, confidence 0.80", "beta: 121.0 BPM, confidence 0.80", "gamma: 60.0 BPM, confidence 0.80",
            "consensus 120.5 BPM", "reference 120.0 BPM",
        ])
        // One dot per window with a tempo (36 of 40), one bar per candidate.
        let groups = root.all(class: "series")
        for group in groups.prefix(3) {
            #expect(group.all(class: "window").count == 36)
            #expect(group.children.filter { $0.name == "polyline" }.count == 4, "lines broken at the windows without a tempo")
        }
        for group in groups.suffix(3) {
            #expect(group.children.filter { $0.name == "rect" }.count == 3)
        }
        #expect(root.all(class: "envelope").first?.children.map(\.name) == ["polygon", "polyline"])
        #expect(root.all(class: "note").isEmpty)
    }

    @Test func theTempoMapIsDrawnOverTheWindowsWithItsLegend() throws {
        let map = TempoMap(
            segments: [
                TempoMap.Segment(startS: 0, endS: 60, startBPM: 110, endBPM: 110),
                TempoMap.Segment(startS: 60, endS: 180, startBPM: 110, endBPM: 80),
            ], minBPM: 80, maxBPM: 110)
        let plot = SongPlot(
            title: "t", subtitle: "", durationS: 180, envelope: nil, analyses: [Sample.analysis("alpha", bpm: 120)], consensusBPM: 110,
            tempoMap: map)
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())
        let segments = try #require(root.all(class: "tempo-map").first).all(class: "segment")
        #expect(segments.count == 2)
        // The ramp falls: it ends lower on the chart (a larger y) than it starts.
        let ramp = try #require(segments.last?.attributes)
        #expect(Double(ramp["y2"] ?? "") ?? 0 > Double(ramp["y1"] ?? "") ?? 0, "\(ramp)")
        let legend = root.all(class: "legend-entry").compactMap { $0.attributes["data-label"] }
        #expect(legend.last == "tempo map: 2 segments, 1 ramp")
        // A steady song says its range.
        let steady = SongPlot(
            title: "t", subtitle: "", durationS: 180, envelope: nil, analyses: [Sample.analysis("alpha", bpm: 120)], consensusBPM: 120,
            tempoMap: TempoMap(segments: [TempoMap.Segment(startS: 0, endS: 180, startBPM: 120, endBPM: 120)], minBPM: 119.8, maxBPM: 120.3))
        let steadyLegend = try ParsedSVG.parse(SongFigure(steady).document().render()).all(class: "legend-entry").compactMap { $0.attributes["data-label"] }
        #expect(steadyLegend.last == "tempo map: steady, 119.8 to 120.3 BPM")
    }

    /// A song of `durationS` seconds at `bpm` with its beat grid and an envelope of 120 values
    /// every `envelopeHopS` seconds.
    static func gridPlot(bpm: Double, firstBeatS: Double, durationS: Double, envelopeHopS: Double) -> SongPlot {
        let envelope = EnergyEnvelope(hopS: envelopeHopS, values: (0..<120).map { Float(0.01 + 0.001 * Double($0 % 7)) })
        return SongPlot(
            title: "t", subtitle: "", durationS: durationS, envelope: envelope, analyses: [Sample.analysis("alpha", bpm: bpm)],
            consensusBPM: bpm, beatGrid: BeatGrid(bpm: bpm, firstBeatS: firstBeatS, clarity: 3))
    }

    /// The constant beat grid hangs one tick per beat from the envelope chart's top, each at its
    /// beat's time, with its legend.
    @Test func theBeatGridIsDrawnAsTicksWithItsLegend() throws {
        let plot = Self.gridPlot(bpm: 120, firstBeatS: 0.25, durationS: 60, envelopeHopS: 0.5)
        let envelope = plot.envelope
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())
        let ticks = try #require(root.all(class: "beat-grid").first).children.filter { $0.name == "line" }
        #expect(ticks.count == 120)
        let xs = ticks.compactMap { Double($0.attributes["x1"] ?? "") }
        // Evenly spaced, half a second apart on the chart's scale (coordinates are rounded).
        let step = (xs[119] - xs[0]) / 119
        #expect(step > 0 && zip(xs, xs.dropFirst()).allSatisfy { abs($1 - $0 - step) < 0.11 })
        let legend = root.all(class: "legend-entry").compactMap { $0.attributes["data-label"] }
        #expect(legend.last == "beat grid: 120.00 BPM from 0.250 s (constant)")
        let without = SongPlot(
            title: "t", subtitle: "", durationS: 60, envelope: envelope, analyses: [Sample.analysis("alpha", bpm: 120)], consensusBPM: 120)
        #expect(try ParsedSVG.parse(SongFigure(without).document().render()).all(class: "beat-grid").isEmpty)
    }

    /// A grid denser than the chart's pixels (a worker may report a song of 10^6 s) draws at
    /// most one tick per pixel column, in order, still spanning the song: the gateway drew one per
    /// beat, 16 million for such a song, and ran out of memory.
    @Test func aBeatGridDenserThanThePixelsDrawsOneTickPerColumn() throws {
        let plot = Self.gridPlot(bpm: 400, firstBeatS: 0.1, durationS: 36_000, envelopeHopS: 1)
        let figure = SongFigure(plot)
        let root = try ParsedSVG.parse(figure.document().render())
        let xs = try #require(root.all(class: "beat-grid").first).children.compactMap { Double($0.attributes["x1"] ?? "") }
        #expect(xs.count > 100 && xs.count <= Int(figure.width), "\(xs.count) ticks")
        #expect(zip(xs, xs.dropFirst()).allSatisfy { $1 >= $0 })
        #expect((xs.last ?? 0) - (xs.first ?? 0) > figure.width / 2)
        // A duration no song has (a library's stored 1e300 s) draws, in bounded time and space.
        var absurd = plot
        absurd.durationS = 1e300
        let drawn = try ParsedSVG.parse(SongFigure(absurd).document().render())
        #expect(try #require(drawn.all(class: "beat-grid").first).children.count <= Int(figure.width))
    }

    @Test func windowStrengthSetsDotSizeAndOpacity() throws {
        let plot = SongPlot(
            title: "t", subtitle: "", durationS: 180, envelope: nil, analyses: [Sample.analysis("alpha", bpm: 120)], consensusBPM: nil)
        let dots = try ParsedSVG.parse(SongFigure(plot).document().render()).all(class: "series")[0].children
            .filter { $0.name == "circle" }
        // Strengths cycle 0, 0.25, 0.5, 0.75.
        #expect(dots.prefix(4).map { $0.attributes["r"] } == ["2.5", "3.38", "4.25", "5.13"])
        #expect(dots.prefix(4).map { $0.attributes["fill-opacity"] } == ["0.25", "0.44", "0.63", "0.81"])
    }

    @Test func tempoDotsSitAtTheirTempoOnTheSharedTimeAxis() throws {
        let plot = SongPlot(
            title: "t", subtitle: "", durationS: 180, envelope: Sample.envelope(),
            analyses: [Sample.analysis("alpha", bpm: 100), Sample.analysis("beta", bpm: 150)], consensusBPM: nil)
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())
        let series = root.all(class: "series")
        func firstDot(_ index: Int) throws -> (x: Double, y: Double) {
            // The first series' marks are circles, the second's squares (x, y: their top-left corner).
            let dot = try #require(series[index].all(class: "window").first)
            if dot.name == "circle" { return (Double(dot.attributes["cx"]!)!, Double(dot.attributes["cy"]!)!) }
            let side = Double(dot.attributes["width"]!)!
            return (Double(dot.attributes["x"]!)! + side / 2, Double(dot.attributes["y"]!)! + side / 2)
        }
        let (alpha, beta) = (try firstDot(0), try firstDot(1))
        #expect(abs(alpha.x - beta.x) < 0.02, "the same window centre is at the same x")
        #expect(alpha.y > beta.y, "a faster tempo is drawn higher")
        // The envelope spans the same x range as the time axis of the tempo chart.
        let envelope = try #require(root.all(class: "envelope").first?.children.first)
        let xs = envelope.attributes["points"]!.split(separator: " ").map { Double($0.split(separator: ",")[0])! }
        let axis = root.all(class: "x")[1].children.first { $0.name == "line" }!
        #expect(abs(xs.min()! - Double(axis.attributes["x1"]!)!) < 1 && abs(xs.max()! - Double(axis.attributes["x2"]!)!) < 1)
    }

    @Test func songWithoutResultsSaysSoInsteadOfDrawingNothing() throws {
        let plot = SongPlot(title: "empty.wav", subtitle: "", durationS: nil, envelope: nil, analyses: [], consensusBPM: nil)
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())
        #expect(root.all(class: "note").map(\.text) == [
            "no energy envelope stored for this song", "no per-window tempi (the analyses were stored without windows)",
            "no tempo candidates",
        ])
        #expect(root.all(class: "series").isEmpty)
    }

    @Test func twoVersionsOfADetectorAreToldApart() {
        let plot = SongPlot(
            title: "t", subtitle: "", durationS: 10, envelope: nil,
            analyses: [Sample.analysis("alpha", bpm: 120, version: "1"), Sample.analysis("alpha", bpm: 121, version: "2")],
            consensusBPM: nil)
        #expect(plot.traces.map(\.label) == ["alpha v1", "alpha v2"])
        #expect(SongPlot.title(title: "T", artist: "A", file: "f") == "A – T")
        #expect(SongPlot.title(title: "T", artist: nil, file: "f") == "T")
        #expect(SongPlot.title(title: "", artist: "A", file: "f") == "f")
    }

    @Test func plotOfASongReadBackFromARealLibrary() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let library = try Sample.library(in: directory)
        let song = Sample.song(0).id
        let record = try #require(try library.song(song))
        let analyses = try library.analyses(of: song, windows: true)
        let plot = SongPlot(
            title: SongPlot.title(title: record.tags.title, artist: record.tags.artist, file: record.fileName),
            subtitle: record.fileName, durationS: record.durationS, envelope: record.envelope,
            analyses: analyses.map(\.record.analysis), consensusBPM: try library.consensus(of: song)?.bpm)
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())
        #expect(root.all(class: "title").first?.text == "Artist – First & Best")
        #expect(Self.series(in: root) == ["alpha", "beta", "gamma", "alpha", "beta", "gamma"])
        #expect(root.all(class: "series")[0].all(class: "window").count == 36)
        #expect(root.all(class: "envelope").count == 1)
        let consensus = try #require(plot.consensusBPM)
        #expect(root.all(class: "legend-entry").contains { $0.attributes["data-label"] == String(format: "consensus %.1f BPM", consensus) })
    }

    @Test func plotOfASynthesisedFileAnalysedInProcess() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let path = directory.file("drums.wav")
        try AudioFileWriter(.wav16).write(
            [Synth.drumPattern(bpm: 120, seconds: 20, sampleRate: 22_050)], sampleRate: 22_050, to: path)
        let result = SongAnalyzer.builtin().analyze(.file(path))
        #expect(result.error == nil)
        let plot = SongPlot(
            title: "drums.wav", subtitle: "", durationS: result.durationSeconds, envelope: result.envelope,
            analyses: result.analyses, consensusBPM: result.consensus.bpm)
        let root = try ParsedSVG.parse(SongFigure(plot).document().render())
        let detectors = BuiltinDetectors.registry.names
        #expect(Self.series(in: root) == detectors + detectors)
        // Each detector has a candidate bar within 4 % of 120 BPM.
        for group in root.all(class: "series").suffix(detectors.count) {
            let tempi = group.children.compactMap { $0.attributes["data-bpm"].flatMap(Double.init) }
            #expect(tempi.contains { abs($0 - 120) / 120 < 0.04 }, "\(group.attributes["data-detector"] ?? ""): \(tempi)")
        }
        #expect(root.all(class: "envelope").count == 1)
        #expect(root.all(class: "note").isEmpty)
    }

    @Test(.enabled(if: ImageFile.converterPath() != nil, "rsvg-convert (librsvg2-bin) is not installed"))
    func pngConversionKeepsTheFiguresSize() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let plot = SongPlot(
            title: "t", subtitle: "", durationS: 180, envelope: Sample.envelope(),
            analyses: [Sample.analysis("alpha", bpm: 120)], consensusBPM: 120)
        let document = SongFigure(plot).document()
        let path = directory.file("figure.PNG")
        try ImageFile(path: path).write(document)
        let size = try PNGHeader.size(atPath: path)
        #expect(size.width == Int(document.width.rounded()) && size.height == Int(document.height.rounded()))
        // Nothing left behind but the image.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["figure.PNG"])
    }

    @Test func outputFormatsAreToldByTheExtension() throws {
        #expect(try ImageFile(path: "a/b.svg").format == .svg)
        #expect(try ImageFile(path: "b.Png").format == .png)
        #expect(throws: PlotError.unsupportedFormat(path: "b.gif")) { try ImageFile(path: "b.gif") }
        #expect(throws: PlotError.unsupportedFormat(path: "svg")) { try ImageFile(path: "svg") }
    }

    @Test func writingIntoAMissingFolderIsAnErrorNamingThePath() throws {
        let directory = try TemporaryDirectory(prefix: "tactus-plot")
        let path = directory.file("missing/figure.svg")
        let document = SVGDocument(width: 10, height: 10, title: "t")
        #expect {
            try ImageFile(path: path).write(document)
        } throws: { error in
            guard case .cannotWrite(let failed, _) = error as? PlotError else { return false }
            return failed == path
        }
    }
}
