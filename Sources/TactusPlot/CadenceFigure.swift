import Foundation

/// The cadence of an accelerometer recording over time: one dot per analysis window with steps
/// (at the window's middle; opacity: its confidence) joined by lines broken where a window has none, the overall cadence as a
/// dashed line, and bands under the windows where the person stood still (grey) or moved without
/// steps (orange).
///
/// Takes plain values, so it draws any cadence analysis. In the SVG the dots are `<g class="series">`
/// (each `<circle>` with `data-time` and `data-cadence`), the bands `<g class="still">` and
/// `<g class="irregular">`, the overall line `<line class="overall">`.
public struct CadenceFigure: Sendable {
    /// One analysis window.
    public struct Window: Sendable, Hashable {
        public enum Kind: Sendable, Hashable {
            case steps(cadence: Double, confidence: Double)
            case still
            case irregular
        }

        public var start: Double
        public var end: Double
        public var kind: Kind

        public init(start: Double, end: Double, kind: Kind) {
            self.start = start
            self.end = end
            self.kind = kind
        }
    }

    public var title: String
    public var windows: [Window]
    /// Seconds from the first sample to the last.
    public var duration: Double
    /// The overall cadence, in steps per minute.
    public var overall: Double?
    public var width: Double

    public init(title: String, windows: [Window], duration: Double, overall: Double?, width: Double = 1100) {
        self.title = title
        self.windows = windows
        self.duration = duration
        self.overall = overall
        self.width = width
    }

    static let lineColor = Palette.color(0)
    static let stillColor = "#D9D9D9"
    static let irregularColor = "#F3C98B"

    public func document() -> SVGDocument {
        let height = 420.0
        var elements = [SVGElement.rect(x: 0, y: 0, width: width, height: height).fill(Palette.background)]
        elements.append(SVGElement.text(title, x: 40, y: 34, size: 20).attribute("font-weight", "bold").fill(Palette.text)
            .attribute("class", "title"))
        let stepping = windows.compactMap { window -> (time: Double, cadence: Double, confidence: Double)? in
            guard case .steps(let cadence, let confidence) = window.kind else { return nil }
            return ((window.start + window.end) / 2, cadence, confidence)
        }
        let still = windows.count { $0.kind == .still }
        let irregular = windows.count { $0.kind == .irregular }
        elements.append(SVGElement.text(
            (overall.map { String(format: "overall %.1f steps/min", $0) } ?? "no steps")
                + " · \(stepping.count) windows with steps, \(still) still, \(irregular) without steps",
            x: 40, y: 56, size: 13).fill(Palette.mutedText).attribute("class", "subtitle"))
        let cadences = stepping.map(\.cadence)
        let low = ((cadences.min() ?? 150) - 10) / 10, high = ((cadences.max() ?? 170) + 10) / 10
        let area = PlotArea(
            left: 84, top: 90, width: width - 84 - 36, height: height - 90 - 60,
            xDomain: 0...max(duration, 1), yDomain: (low.rounded(.down) * 10)...(high.rounded(.up) * 10))
        elements.append(SVGElement.group(class: "still", bands(.still, area).map { $0.fill(Self.stillColor) }))
        elements.append(SVGElement.group(class: "irregular", bands(.irregular, area).map { $0.fill(Self.irregularColor) }))
        elements += area.frame(xTitle: "time (s)", yTitle: "cadence (steps/min)")
        if let overall {
            elements.append(SVGElement.line(from: (area.left, area.y(overall)), to: (area.right, area.y(overall)))
                .stroke(Palette.mutedText, width: 1.5).dashed().attribute("class", "overall"))
        }
        guard !stepping.isEmpty else {
            elements.append(area.note("no window with steps"))
            return SVGDocument(width: width, height: height, title: title, elements: elements)
        }
        // One line per run of consecutive windows with steps: no line across a pause.
        var runs: [[(x: Double, y: Double)]] = [[]]
        for window in windows {
            if case .steps(let cadence, _) = window.kind {
                runs[runs.count - 1].append((area.x((window.start + window.end) / 2), area.y(cadence)))
            } else if !runs[runs.count - 1].isEmpty {
                runs.append([])
            }
        }
        var series = runs.filter { $0.count > 1 }.map { SVGElement.polyline($0).stroke(Self.lineColor, width: 1.5) }
        for point in stepping {
            series.append(SVGElement.circle(x: area.x(point.time), y: area.y(point.cadence), radius: 3.5).fill(Self.lineColor)
                .opacity(0.3 + 0.7 * point.confidence)
                .attribute("data-time", point.time).attribute("data-cadence", point.cadence))
        }
        elements.append(SVGElement.group(class: "series", series))
        return SVGDocument(width: width, height: height, title: title, elements: elements)
    }

    /// One rectangle per run of consecutive windows of `kind`, from the first's middle minus
    /// half a hop to the last's middle plus half a hop.
    private func bands(_ kind: Window.Kind, _ area: PlotArea) -> [SVGElement] {
        let hop = windows.count > 1 ? windows[1].start - windows[0].start : (windows.first.map { $0.end - $0.start } ?? 0)
        var rectangles: [SVGElement] = []
        var runStart: Double?
        for (index, window) in windows.enumerated() {
            let middle = (window.start + window.end) / 2
            if window.kind == kind, runStart == nil { runStart = middle - hop / 2 }
            let runEnds = window.kind != kind || index == windows.count - 1
            if runEnds, let start = runStart {
                let end = window.kind == kind ? middle + hop / 2 : middle - hop / 2
                rectangles.append(SVGElement.rect(x: area.x(start), y: area.top, width: area.x(end) - area.x(start), height: area.height))
                runStart = nil
            }
        }
        return rectangles
    }
}
