import Foundation
import TactusModel

/// Draws a ``TactusStore/LibraryComparison`` as one figure of three charts:
///
/// 1. agreement between detectors as a matrix: above the diagonal the share of songs whose
///    tempi agree within 4 %, below it the share that agree up to an octave (×2, ×½);
/// 2. each detector's accuracy against the reference tempi (Acc1 and Acc2 bars), or a note
///    when the library has no reference tempi;
/// 3. the histogram of the library's consensus tempi.
///
/// In the SVG the matrix is `<g class="agreement">` with a `<g class="cell">` per pair, the
/// accuracy bars `<g class="series" data-detector=...>`, the histogram `<g class="histogram">`.
public struct LibraryFigure: Sendable {
    public var comparison: LibraryComparison
    public var title: String

    public init(_ comparison: LibraryComparison, title: String = "Tactus library: how the detectors compare") {
        self.comparison = comparison
        self.title = title
    }

    static let acc1Color = "#0072B2"
    static let acc2Color = "#9CC7E4"
    static let histogramColor = "#009E73"

    public func document() -> SVGDocument {
        let width = 1100.0
        var elements = [SVGElement.rect(x: 0, y: 0, width: width, height: 0)]  // sized below
        elements.append(SVGElement.text(title, x: 40, y: 34, size: 20).attribute("font-weight", "bold").fill(Palette.text)
            .attribute("class", "title"))
        let references = comparison.accuracy.map(\.count).max() ?? 0
        elements.append(SVGElement.text(
            "\(comparison.songs) songs · \(detectors.count) detectors · "
                + (references > 0 ? "reference tempi for up to \(references) songs" : "no reference tempi"),
            x: 40, y: 56, size: 13).fill(Palette.mutedText).attribute("class", "subtitle"))

        let agreement = appendingAgreement(to: elements, left: 40, top: 130, size: 480)
        elements = agreement.elements
        let matrixBottom = agreement.bottom
        // Headroom above 100 % for the bars' labels.
        let accuracy = PlotArea(left: 640, top: 130, width: 420, height: 300, xDomain: 0...1, yDomain: 0...110)
        elements += accuracyChart(accuracy)
        let histogram = PlotArea(
            left: 84, top: max(matrixBottom, accuracy.bottom + 60) + 40, width: width - 84 - 36, height: 230,
            xDomain: histogramDomain(), yDomain: 0...Double(max(comparison.histogram.map(\.count).max() ?? 0, 1)))
        elements += histogramChart(histogram)
        let height = (histogram.bottom + 52).rounded(.up)
        elements[0] = SVGElement.rect(x: 0, y: 0, width: width, height: height).fill(Palette.background)
        return SVGDocument(width: width, height: height, title: title, elements: elements)
    }

    /// Every detector label of the comparison, sorted (the consensus' accuracy row is not a detector).
    var detectors: [String] {
        Array(Set(comparison.agreements.flatMap { [$0.first, $0.second] } + comparison.accuracy.map(\.detector)))
            .filter { $0 != "consensus" }.sorted()
    }

    // MARK: - Agreement matrix

    private func appendingAgreement(to elements: [SVGElement], left: Double, top: Double, size: Double)
        -> (elements: [SVGElement], bottom: Double)
    {
        var elements = elements
        elements.append(SVGElement.text("Agreement between detectors", x: left, y: top - 30, size: 14)
            .attribute("font-weight", "bold").fill(Palette.text).attribute("class", "panel-title"))
        elements.append(SVGElement.text(
            "above the diagonal: within 4 % · below: up to an octave · n = songs where both found a tempo",
            x: left, y: top - 12, size: 11).fill(Palette.mutedText))
        let names = detectors
        guard names.count > 1 else {
            elements.append(SVGElement.text("fewer than two detectors: nothing to compare", x: left, y: top + 40, size: 13)
                .fill(Palette.mutedText).attribute("class", "note"))
            return (elements, top + 60)
        }
        let labelWidth = 150.0
        let cell = min((size - labelWidth) / Double(names.count), 110)
        let gridLeft = left + labelWidth, gridTop = top + 10
        var cells = [SVGElement]()
        func agreement(_ a: String, _ b: String) -> LibraryComparison.Agreement? {
            comparison.agreements.first { ($0.first == a && $0.second == b) || ($0.first == b && $0.second == a) }
        }
        for (row, rowName) in names.enumerated() {
            for (column, columnName) in names.enumerated() {
                let x = gridLeft + Double(column) * cell, y = gridTop + Double(row) * cell
                let box = SVGElement.rect(x: x, y: y, width: cell - 2, height: cell - 2)
                guard row != column, let pair = agreement(rowName, columnName) else {
                    cells.append(box.fill("#F2F2F2"))
                    continue
                }
                let share = column > row ? pair.agree : pair.agreeOctave
                let ink = share > 0.55 ? "#FFFFFF" : Palette.text
                cells.append(SVGElement.group(class: "cell", [
                    box.fill(pair.songs == 0 ? "#F2F2F2" : Palette.heat(share)),
                    SVGElement.text(pair.songs == 0 ? "–" : String(format: "%.0f %%", share * 100),
                        x: x + cell / 2 - 1, y: y + cell / 2 + 1, size: 15, anchor: "middle").fill(ink)
                        .attribute("font-weight", "bold"),
                    SVGElement.text("n = \(pair.songs)", x: x + cell / 2 - 1, y: y + cell / 2 + 18, size: 10, anchor: "middle")
                        .fill(ink),
                ]).attribute("data-pair", "\(rowName)|\(columnName)"))
            }
            cells.append(SVGElement.text(rowName, x: gridLeft - 8, y: gridTop + (Double(row) + 0.5) * cell + 4, size: 12, anchor: "end")
                .fill(Palette.text))
            let columnX = gridLeft + (Double(row) + 0.5) * cell
            let columnY = gridTop + Double(names.count) * cell + 10
            cells.append(SVGElement.text(rowName, x: columnX, y: columnY, size: 12, anchor: "end").fill(Palette.text)
                .attribute("transform", "rotate(-35 \(SVGNumber.format(columnX)) \(SVGNumber.format(columnY)))"))
        }
        elements.append(SVGElement.group(class: "agreement", cells))
        return (elements, gridTop + Double(names.count) * cell + 90)
    }

    // MARK: - Accuracy

    private func accuracyChart(_ area: PlotArea) -> [SVGElement] {
        var elements = [area.title("Accuracy against the reference tempi")]
        let yTicks = [0.0, 20, 40, 60, 80, 100]
        elements.append(area.grid(xTicks: [], yTicks: yTicks))
        elements.append(area.yAxis(ticks: yTicks, title: "songs (%)") { String(format: "%.0f", $0) })
        elements.append(SVGElement.line(from: (area.left, area.bottom), to: (area.right, area.bottom)).stroke(Palette.axis)
            .attribute("class", "axis x"))
        guard !comparison.accuracy.isEmpty else {
            elements.append(area.note("no reference tempi (set them with `tactus truth`)"))
            return elements
        }
        let legend = Legend(entries: [
            Legend.Entry(label: "Acc1: within 4 %", color: Self.acc1Color, swatch: .box),
            Legend.Entry(label: "Acc2: also ×2, ×½, ×3, ×⅓", color: Self.acc2Color, swatch: .box),
        ]).layout(left: area.left, top: area.bottom + 44, width: area.width)
        elements.append(legend.element)
        let slot = area.width / Double(comparison.accuracy.count)
        let barWidth = min(slot * 0.35, 44)
        for (index, accuracy) in comparison.accuracy.enumerated() {
            let center = area.left + (Double(index) + 0.5) * slot
            var marks = [SVGElement]()
            for (share, color, x) in [(accuracy.acc1, Self.acc1Color, center - barWidth), (accuracy.acc2, Self.acc2Color, center)] {
                let top = area.y(share * 100)
                marks.append(SVGElement.rect(x: x, y: top, width: barWidth - 2, height: area.bottom - top).fill(color))
                marks.append(SVGElement.text(String(format: "%.0f", share * 100), x: x + barWidth / 2 - 1, y: top - 4, size: 11, anchor: "middle")
                    .fill(Palette.text))
            }
            marks.append(SVGElement.text(accuracy.detector, x: center, y: area.bottom + 16, size: 12, anchor: "middle").fill(Palette.text))
            marks.append(SVGElement.text("n = \(accuracy.count)", x: center, y: area.bottom + 30, size: 10, anchor: "middle")
                .fill(Palette.mutedText))
            elements.append(SVGElement.group(class: "series", marks).attribute("data-detector", accuracy.detector))
        }
        return elements
    }

    // MARK: - Histogram

    private func histogramDomain() -> ClosedRange<Double> {
        guard let first = comparison.histogram.first, let last = comparison.histogram.last else { return 40...240 }
        return first.lower...(last.lower + last.width)
    }

    private func histogramChart(_ area: PlotArea) -> [SVGElement] {
        var elements = [area.title("Consensus tempo of the songs")]
        let yTickCount = min(Int(area.y.domain.upperBound), 5)
        elements += area.frame(xTitle: "tempo (BPM)", yTitle: "songs", xTickCount: 12, yTickCount: max(yTickCount, 1))
        guard !comparison.histogram.isEmpty else {
            elements.append(area.note("no song has a consensus tempo yet"))
            return elements
        }
        let bars = comparison.histogram.map { bin in
            let top = area.y(Double(bin.count))
            return SVGElement.rect(x: area.x(bin.lower) + 1, y: top, width: area.x(bin.lower + bin.width) - area.x(bin.lower) - 2,
                height: area.bottom - top).fill(Self.histogramColor)
                .attribute("data-count", "\(bin.count)")
        }
        elements.append(SVGElement.group(class: "histogram", bars))
        return elements
    }
}
