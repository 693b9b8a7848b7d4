/// A rectangle of a figure holding one chart: its position in pixels, its two scales, and
/// the frame around it (grid, axes with ticks and labels, a title above it).
struct PlotArea {
    var left: Double
    var top: Double
    var width: Double
    var height: Double
    var x: LinearScale
    var y: LinearScale

    var right: Double { left + width }
    var bottom: Double { top + height }

    /// An area whose scales map `xDomain` left to right and `yDomain` bottom to top.
    init(left: Double, top: Double, width: Double, height: Double, xDomain: ClosedRange<Double>, yDomain: ClosedRange<Double>) {
        self.left = left
        self.top = top
        self.width = width
        self.height = height
        x = LinearScale(domain: xDomain, range: (left, left + width))
        y = LinearScale(domain: yDomain, range: (top + height, top))
    }

    /// The chart's title, above its top-left corner.
    func title(_ text: String) -> SVGElement {
        SVGElement.text(text, x: left, y: top - 10, size: 14).attribute("font-weight", "bold").fill(Palette.text)
            .attribute("class", "panel-title")
    }

    /// Horizontal grid lines at the y ticks and vertical ones at the x ticks.
    func grid(xTicks: [Double], yTicks: [Double]) -> SVGElement {
        let vertical = xTicks.map { SVGElement.line(from: (x($0), top), to: (x($0), bottom)) }
        let horizontal = yTicks.map { SVGElement.line(from: (left, y($0)), to: (right, y($0))) }
        return SVGElement.group(class: "grid", vertical + horizontal).stroke(Palette.grid)
    }

    /// The x axis along the bottom: a line, ticks labelled by `label`, and the axis title.
    func xAxis(ticks: [Double], title: String, label: (Double) -> String) -> SVGElement {
        var elements = [SVGElement.line(from: (left, bottom), to: (right, bottom)).stroke(Palette.axis)]
        for tick in ticks {
            elements.append(SVGElement.line(from: (x(tick), bottom), to: (x(tick), bottom + 5)).stroke(Palette.axis))
            elements.append(SVGElement.text(label(tick), x: x(tick), y: bottom + 18, size: 11, anchor: "middle").fill(Palette.text))
        }
        elements.append(
            SVGElement.text(title, x: left + width / 2, y: bottom + 36, size: 12, anchor: "middle").fill(Palette.mutedText)
                .attribute("class", "axis-title"))
        return SVGElement.group(class: "axis x", elements)
    }

    /// The y axis along the left side: a line, ticks labelled by `label`, and the axis title
    /// written upwards.
    func yAxis(ticks: [Double], title: String, label: (Double) -> String) -> SVGElement {
        var elements = [SVGElement.line(from: (left, top), to: (left, bottom)).stroke(Palette.axis)]
        for tick in ticks {
            elements.append(SVGElement.line(from: (left - 5, y(tick)), to: (left, y(tick))).stroke(Palette.axis))
            elements.append(SVGElement.text(label(tick), x: left - 8, y: y(tick) + 4, size: 11, anchor: "end").fill(Palette.text))
        }
        let middle = top + height / 2
        elements.append(
            SVGElement.text(title, x: left - 48, y: middle, size: 12, anchor: "middle").fill(Palette.mutedText)
                .attribute("transform", "rotate(-90 \(SVGNumber.format(left - 48)) \(SVGNumber.format(middle)))")
                .attribute("class", "axis-title"))
        return SVGElement.group(class: "axis y", elements)
    }

    /// The grid and both axes with round ticks.
    func frame(xTitle: String, yTitle: String, xTickCount: Int = 10, yTickCount: Int = 5) -> [SVGElement] {
        let xTicks = x.ticks(count: xTickCount), yTicks = y.ticks(count: yTickCount)
        let xStep = Ticks.step(for: x.domain, count: xTickCount), yStep = Ticks.step(for: y.domain, count: yTickCount)
        return [
            grid(xTicks: xTicks, yTicks: yTicks),
            xAxis(ticks: xTicks, title: xTitle) { Ticks.label($0, step: xStep) },
            yAxis(ticks: yTicks, title: yTitle) { Ticks.label($0, step: yStep) },
        ]
    }

    /// A grey note in the middle of the area, for a chart with nothing to draw.
    func note(_ text: String) -> SVGElement {
        SVGElement.text(text, x: left + width / 2, y: top + height / 2, size: 13, anchor: "middle").fill(Palette.mutedText)
            .attribute("class", "note")
    }
}

/// A row of legend entries (a swatch and a label each), wrapped onto more rows when they
/// do not fit in `width`.
struct Legend {
    enum Swatch {
        /// A short thick line with a marker: a series of points joined by lines.
        case line(Marker)
        /// A dashed line: a reference value.
        case dashed
        /// A filled square: bars or an area.
        case box
        /// Short vertical ticks: events in time (beats).
        case ticks
    }

    struct Entry {
        var label: String
        var color: String
        var swatch: Swatch
    }

    var entries: [Entry]

    /// The legend laid out from (`left`, `top`), and the height it takes.
    func layout(left: Double, top: Double, width: Double) -> (element: SVGElement, height: Double) {
        let rowHeight = 20.0
        var x = left, y = top + 13
        var groups = [SVGElement]()
        for entry in entries {
            // DejaVu Sans at 12 px: about 7 px per character.
            let entryWidth = 34 + Double(entry.label.count) * 7 + 18
            if x > left, x + entryWidth > left + width {
                x = left
                y += rowHeight
            }
            let swatch: SVGElement
            switch entry.swatch {
            case .line(let marker):
                swatch = .group([
                    SVGElement.line(from: (x, y - 4), to: (x + 26, y - 4)).stroke(entry.color, width: 2.5),
                    marker.element(x: x + 13, y: y - 4, radius: 4, color: entry.color, opacity: 1),
                ])
            case .dashed:
                swatch = SVGElement.line(from: (x, y - 4), to: (x + 26, y - 4)).stroke(entry.color, width: 2).dashed()
            case .box:
                swatch = SVGElement.rect(x: x + 6, y: y - 11, width: 14, height: 14).fill(entry.color)
            case .ticks:
                swatch = .group([5.0, 13, 21].map { SVGElement.line(from: (x + $0, y - 10), to: (x + $0, y + 1)).stroke(entry.color, width: 1.5) })
            }
            groups.append(
                SVGElement.group(class: "legend-entry", [
                    swatch, SVGElement.text(entry.label, x: x + 34, y: y, size: 12).fill(Palette.text),
                ]).attribute("data-label", entry.label))
            x += entryWidth
        }
        return (SVGElement.group(class: "legend", groups), y - top + 8)
    }
}
