import Foundation
import TactusDetector

/// Draws a ``SongPlot`` as one figure of three charts sharing what they can:
///
/// 1. the energy envelope in dB over time (the peak and the mean of each pixel column), with
///    the beats of the detectors that track them as ticks along its foot (downbeats taller);
/// 2. each detector's per-window tempo over the same time axis, dots sized and shaded by
///    the window's strength, with the consensus and the reference tempo as dashed lines;
/// 3. each detector's tempo candidates as bars (BPM across, strength up), side by side.
///
/// Every detector keeps one colour throughout, named in the legend under the title with its
/// tempo and confidence. In the SVG, each detector's marks are a `<g class="series">` with a
/// `data-detector` attribute, each legend entry a `<g class="legend-entry">`.
public struct SongFigure: Sendable {
    public var plot: SongPlot
    /// The image's width in pixels (the height follows from the content).
    public var width: Double

    public init(_ plot: SongPlot, width: Double = 1100) {
        self.plot = plot
        self.width = max(width, 600)
    }

    /// The lowest level the envelope chart shows, below its loudest point, in dB.
    static let envelopeRange = 60.0

    private let margin = (left: 84.0, right: 36.0)

    public func document() -> SVGDocument {
        var elements = [SVGElement]()
        let innerWidth = width - margin.left - margin.right
        elements.append(SVGElement.text(plot.title, x: margin.left, y: 34, size: 20).attribute("font-weight", "bold")
            .fill(Palette.text).attribute("class", "title"))
        elements.append(SVGElement.text(plot.subtitle, x: margin.left, y: 56, size: 13).fill(Palette.mutedText)
            .attribute("class", "subtitle"))

        let legend = legend().layout(left: margin.left, top: 68, width: innerWidth)
        elements.append(legend.element)

        let envelopeArea = PlotArea(
            left: margin.left, top: 68 + legend.height + 34, width: innerWidth, height: 150,
            xDomain: 0...plot.durationS, yDomain: envelopeDomain())
        elements += envelopeChart(envelopeArea)

        let tempoArea = PlotArea(
            left: margin.left, top: envelopeArea.bottom + 78, width: innerWidth, height: 250,
            xDomain: 0...plot.durationS, yDomain: tempoDomain())
        elements += tempoChart(tempoArea)

        let candidateArea = PlotArea(
            left: margin.left, top: tempoArea.bottom + 78, width: innerWidth, height: 190,
            xDomain: candidateDomain(), yDomain: 0...1.32)
        elements += candidateChart(candidateArea)

        let height = (candidateArea.bottom + 52).rounded(.up)
        let background = SVGElement.rect(x: 0, y: 0, width: width, height: height).fill(Palette.background)
        return SVGDocument(
            width: width, height: height, title: "Tempo analysis: \(plot.title)", elements: [background] + elements)
    }

    // MARK: - Legend

    private func legend() -> Legend {
        var entries = plot.traces.enumerated().map { index, trace in
            let tempo = trace.bpm.map { String(format: "%.1f BPM", $0) } ?? "no tempo"
            return Legend.Entry(
                label: "\(trace.label): \(tempo), confidence \(String(format: "%.2f", trace.confidence))",
                color: Palette.color(index), swatch: .line(Marker.of(index)))
        }
        if let consensus = plot.consensusBPM {
            entries.append(Legend.Entry(label: String(format: "consensus %.1f BPM", consensus), color: "#777777", swatch: .dashed))
        }
        if let reference = plot.referenceBPM {
            entries.append(Legend.Entry(label: String(format: "reference %.1f BPM", reference), color: "#000000", swatch: .dashed))
        }
        if let map = plot.tempoMap {
            let ramps = map.segments.filter { !$0.isSteady }.count
            let label =
                if map.stable { String(format: "tempo map: steady, %.1f to %.1f BPM", map.minBPM, map.maxBPM) }
                else if map.segments.count == 1 { String(format: "tempo map: one ramp, %.1f to %.1f BPM", map.segments[0].startBPM, map.segments[0].endBPM) }
                else { "tempo map: \(map.segments.count) segments" + (ramps > 0 ? ", \(ramps) ramp\(ramps == 1 ? "" : "s")" : "") }
            entries.append(Legend.Entry(label: label, color: Self.tempoMapColor, swatch: .box))
        }
        if let grid = plot.beatGrid {
            entries.append(
                Legend.Entry(
                    label: String(format: "beat grid: %.2f BPM from %.3f s (constant)", grid.bpm, grid.firstBeatS),
                    color: Self.beatGridColor, swatch: .ticks))
        }
        return Legend(entries: entries)
    }

    // MARK: - Envelope

    /// Level in dB of a mean square: 0 dB is a full-scale square wave, a full-scale sine is -3 dB.
    static func decibels(_ meanSquare: Double) -> Double {
        10 * log10(max(meanSquare, 1e-12))
    }

    /// The peak and the mean level of each pixel column, in dB, from left to right.
    private func envelopeColumns(count: Int) -> [(peak: Double, mean: Double)?] {
        guard let envelope = plot.envelope, !envelope.values.isEmpty, count > 0 else { return [] }
        var sums = [Double](repeating: 0, count: count), peaks = [Double](repeating: 0, count: count)
        var counts = [Int](repeating: 0, count: count)
        for (index, value) in envelope.values.enumerated() {
            let time = (Double(index) + 0.5) * envelope.hopS
            let column = min(max(Int(time / plot.durationS * Double(count)), 0), count - 1)
            let energy = Double(value).isFinite ? max(Double(value), 0) : 0
            sums[column] += energy
            peaks[column] = max(peaks[column], energy)
            counts[column] += 1
        }
        return (0..<count).map { column in
            counts[column] == 0
                ? nil : (Self.decibels(peaks[column]), Self.decibels(sums[column] / Double(counts[column])))
        }
    }

    private func envelopeDomain() -> ClosedRange<Double> {
        let levels = (plot.envelope?.values ?? []).map { Self.decibels(Double($0)) }
        guard let loudest = levels.max() else { return -60...0 }
        let top = (loudest / 10).rounded(.up) * 10
        let bottom = max(((levels.min() ?? top - Self.envelopeRange) / 10).rounded(.down) * 10, top - Self.envelopeRange)
        return min(bottom, top - 10)...top
    }

    private func envelopeChart(_ area: PlotArea) -> [SVGElement] {
        let hop = (plot.envelope?.hopS ?? 0) * 1000
        var elements = [area.title(
            String(format: "Energy envelope: level in dB (10·log10 of the mean square per %.1f ms block; shaded: peak, line: mean)", hop))]
        elements += area.frame(xTitle: "time (s)", yTitle: "level (dB)")
        let columns = envelopeColumns(count: Int(area.width))
        guard columns.contains(where: { $0 != nil }) else {
            elements.append(area.note("no energy envelope stored for this song"))
            return elements
        }
        let floor = area.y.domain.lowerBound
        func clamp(_ level: Double) -> Double { area.y(max(level, floor)) }
        var peak = [(x: Double, y: Double)](), mean = [(x: Double, y: Double)]()
        for (column, levels) in columns.enumerated() {
            guard let levels else { continue }
            let x = area.left + Double(column) + 0.5
            peak.append((x, clamp(levels.peak)))
            mean.append((x, clamp(levels.mean)))
        }
        let outline = [(x: peak.first!.x, y: area.bottom)] + peak + [(x: peak.last!.x, y: area.bottom)]
        elements.append(SVGElement.group(class: "envelope", [
            SVGElement.polygon(outline).fill(Palette.envelopeFill).opacity(0.8),
            SVGElement.polyline(mean).stroke(Palette.envelopeLine, width: 1.2),
        ]))
        return elements + beatTicks(area) + gridTicks(area)
    }

    /// The constant beat grid's beats as short ticks hanging from the envelope chart's top
    /// (`<g class="beat-grid">`), so they face the tracked beats rising from its foot. At most one
    /// tick per pixel column: a grid denser than the pixels draws as a band, and neither the
    /// ticks nor the time to find them grow with the song's length.
    private func gridTicks(_ area: PlotArea) -> [SVGElement] {
        guard let grid = plot.beatGrid, grid.periodS.isFinite, grid.periodS > 0 else { return [] }
        let domain = area.x.domain
        let span = domain.upperBound - domain.lowerBound
        guard span > 0, area.width >= 1 else { return [] }
        var ticks: [SVGElement] = []
        var index = max(((domain.lowerBound - grid.firstBeatS) / grid.periodS).rounded(.up), 0)
        var lastColumn = -1.0
        // Each step reaches a later column (or the next beat, when they are sparser): a step
        // per column at most, whatever the rounding of times far beyond the song's start.
        for _ in 0..<(4 * Int(area.width) + 4) {
            let time = grid.firstBeatS + index * grid.periodS
            guard time <= domain.upperBound else { break }
            let column = max(((time - domain.lowerBound) / span * area.width).rounded(.down), lastColumn)
            if column > lastColumn {
                let x = area.x(time)
                ticks.append(SVGElement.line(from: (x, area.top), to: (x, area.top + 8)).stroke(Self.beatGridColor, width: 1))
                lastColumn = column
            }
            // The next beat, or the first in the next column when the beats are denser.
            let nextColumnS = domain.lowerBound + (column + 1) / area.width * span
            let next = max(index + 1, ((nextColumnS - grid.firstBeatS) / grid.periodS).rounded(.up))
            guard next > index else { break }
            index = next
        }
        return [SVGElement.group(class: "beat-grid", ticks)]
    }

    /// The beat grid's colour: a neutral grey, apart from the detectors'.
    static let beatGridColor = "#555555"

    /// Each beat-tracking detector's beats as ticks rising from the envelope chart's foot, in
    /// the detector's colour (`<g class="beats" data-detector=...>`), downbeats twice as tall.
    private func beatTicks(_ area: PlotArea) -> [SVGElement] {
        plot.traces.enumerated().compactMap { index, trace in
            guard let beats = trace.beats, !beats.times.isEmpty else { return nil }
            let downbeats = Set(beats.downbeats ?? [])
            let ticks = beats.times.filter { area.x.domain.contains($0) }.map { time in
                let x = area.x(time)
                let height = downbeats.contains(time) ? 16.0 : 8.0
                return SVGElement.line(from: (x, area.bottom), to: (x, area.bottom - height)).stroke(Palette.color(index), width: 1)
            }
            return SVGElement.group(class: "beats", ticks).attribute("data-detector", trace.label)
        }
    }

    // MARK: - Per-window tempo

    private func tempoDomain() -> ClosedRange<Double> {
        let tempi = plot.traces.flatMap { $0.windows.compactMap(\.bpm) + [$0.bpm].compactMap { $0 } }
            + [plot.consensusBPM, plot.referenceBPM].compactMap { $0 }
            + (plot.tempoMap?.segments.flatMap { [$0.startBPM, $0.endBPM] } ?? [])
        guard let low = tempi.min(), let high = tempi.max() else { return 60...180 }
        let padding = max((high - low) * 0.08, 4)
        return Ticks.rounded(max(low - padding, 0)...(high + padding), count: 5)
    }

    /// The colour of the tempo map's band.
    static let tempoMapColor = "#555555"

    private func tempoChart(_ area: PlotArea) -> [SVGElement] {
        var elements = [area.title("Tempo per analysis window (dot size and opacity: the window's strength, 0 to 1)")]
        elements += area.frame(xTitle: "time (s)", yTitle: "tempo (BPM)")
        guard plot.traces.contains(where: { $0.windows.contains { $0.bpm != nil } }) else {
            elements.append(area.note("no per-window tempi (the analyses were stored without windows)"))
            return elements
        }
        var references = [SVGElement]()
        if let consensus = plot.consensusBPM {
            references.append(SVGElement.line(from: (area.left, area.y(consensus)), to: (area.right, area.y(consensus)))
                .stroke("#777777", width: 1.5).dashed())
        }
        if let reference = plot.referenceBPM {
            references.append(SVGElement.line(from: (area.left, area.y(reference)), to: (area.right, area.y(reference)))
                .stroke("#000000", width: 1.5).dashed("3 3"))
        }
        elements.append(SVGElement.group(class: "reference-lines", references))
        if let map = plot.tempoMap {
            // Each segment of the map, steady or a ramp, a broad pale band under the windows.
            let segments = map.segments.map { segment in
                SVGElement.line(from: (area.x(segment.startS), area.y(segment.startBPM)), to: (area.x(segment.endS), area.y(segment.endBPM)))
                    .stroke(Self.tempoMapColor, width: 5).attribute("stroke-opacity", 0.35).attribute("class", "segment")
            }
            elements.append(SVGElement.group(class: "tempo-map", segments))
        }
        for (index, trace) in plot.traces.enumerated() {
            let color = Palette.color(index)
            var segments = [[(x: Double, y: Double)]]()
            var current = [(x: Double, y: Double)]()
            var dots = [SVGElement]()
            for window in trace.windows {
                guard let bpm = window.bpm else {
                    if !current.isEmpty { segments.append(current) }
                    current = []
                    continue
                }
                let strength = min(max(window.strength.isFinite ? window.strength : 0, 0), 1)
                let point = (x: area.x(window.startS + window.durationS / 2), y: area.y(bpm))
                current.append(point)
                dots.append(Marker.of(index).element(
                    x: point.x, y: point.y, radius: 2.5 + 3.5 * strength, color: color, opacity: 0.25 + 0.75 * strength)
                    .attribute("class", "window"))
            }
            if !current.isEmpty { segments.append(current) }
            let lines = segments.filter { $0.count > 1 }.map {
                SVGElement.polyline($0).stroke(color, width: 1.4).attribute("stroke-opacity", 0.7)
            }
            elements.append(SVGElement.group(class: "series", lines + dots).attribute("data-detector", trace.label))
        }
        return elements
    }

    // MARK: - Candidates

    private func candidateDomain() -> ClosedRange<Double> {
        let tempi = plot.traces.flatMap { $0.candidates.map(\.bpm) }
        guard let low = tempi.min(), let high = tempi.max() else { return 40...240 }
        let padding = max((high - low) * 0.06, 8)
        return Ticks.rounded(max(low - padding, 0)...(high + padding), count: 10)
    }

    private func candidateChart(_ area: PlotArea) -> [SVGElement] {
        var elements = [area.title("Tempo candidates of each detector (strength relative to its best candidate)")]
        let xTicks = area.x.ticks(count: 10), xStep = Ticks.step(for: area.x.domain, count: 10)
        let yTicks = [0, 0.25, 0.5, 0.75, 1.0]
        elements.append(area.grid(xTicks: xTicks, yTicks: yTicks))
        elements.append(area.xAxis(ticks: xTicks, title: "tempo (BPM)") { Ticks.label($0, step: xStep) })
        elements.append(area.yAxis(ticks: yTicks, title: "strength") { String(format: "%.2g", $0) })
        guard plot.traces.contains(where: { !$0.candidates.isEmpty }) else {
            elements.append(area.note("no tempo candidates"))
            return elements
        }
        let barWidth = 7.0, stride = 8.0
        let count = Double(plot.traces.count)
        func center(_ candidate: TempoCandidate, of index: Int) -> Double {
            area.x(candidate.bpm) + (Double(index) - (count - 1) / 2) * stride
        }
        func strength(_ candidate: TempoCandidate) -> Double {
            min(max(candidate.strength.isFinite ? candidate.strength : 0, 0), 1)
        }
        // Every bar is placed before any label, so that no label covers a bar.
        var labels = LabelPlacer()
        for (index, trace) in plot.traces.enumerated() {
            for candidate in trace.candidates {
                let top = area.y(strength(candidate))
                labels.block(x: center(candidate, of: index), y: (top + area.bottom) / 2, width: barWidth, height: area.bottom - top)
            }
        }
        var labelElements = [SVGElement]()
        for (index, trace) in plot.traces.enumerated() {
            let color = Palette.color(index)
            var bars = [SVGElement]()
            for candidate in trace.candidates {
                let x = center(candidate, of: index), top = area.y(strength(candidate))
                bars.append(SVGElement.rect(x: x - barWidth / 2, y: top, width: barWidth, height: area.bottom - top)
                    .fill(color).attribute("data-bpm", candidate.bpm))
                let y = labels.place(x: x, y: top - 4, width: 30, height: 11)
                labelElements.append(SVGElement.text(String(format: "%.1f", candidate.bpm), x: x, y: y, size: 10, anchor: "middle")
                    .fill(color))
            }
            elements.append(SVGElement.group(class: "series", bars).attribute("data-detector", trace.label))
        }
        elements.append(SVGElement.group(class: "bar-labels", labelElements))
        return elements
    }
}

/// Places small labels so they cover neither each other nor the marks registered with
/// ``block(x:y:width:height:)``: a label that would cover something moves up until it is clear.
/// Boxes are given by their centre and size; a label's `y` is its baseline.
struct LabelPlacer {
    private var taken = [(x: Double, y: Double, width: Double, height: Double)]()

    /// Keeps labels off the box centred on (`x`, `y`).
    mutating func block(x: Double, y: Double, width: Double, height: Double) {
        taken.append((x, y, width, height))
    }

    /// The baseline for a label centred on `x` at or above baseline `y`.
    mutating func place(x: Double, y: Double, width: Double, height: Double) -> Double {
        var middle = y - height / 2
        while let blocking = taken.first(where: {
            abs($0.x - x) < ($0.width + width) / 2 && abs($0.y - middle) < ($0.height + height) / 2
        }) {
            middle = blocking.y - (blocking.height + height) / 2 - 0.5
        }
        taken.append((x, middle, width, height))
        return middle + height / 2
    }
}
