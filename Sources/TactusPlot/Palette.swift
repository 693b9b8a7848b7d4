/// Colours of the figures: the Okabe–Ito palette, told apart by people with any common
/// colour-vision deficiency, and the greys of the frame.
public enum Palette {
    /// Series colours, in the order detectors are drawn (cycled when there are more).
    public static let series = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]

    /// The colour of the `index`-th series.
    public static func color(_ index: Int) -> String {
        series[index % series.count]
    }

    public static let text = "#222222"
    public static let mutedText = "#555555"
    public static let axis = "#444444"
    public static let grid = "#E3E3E3"
    public static let background = "#FFFFFF"
    public static let envelopeFill = "#9DB8D2"
    public static let envelopeLine = "#2F5D8A"

    /// A colour between white (`share` 0) and a deep blue (`share` 1), for heat maps.
    public static func heat(_ share: Double) -> String {
        let t = min(max(share.isFinite ? share : 0, 0), 1)
        let low = (r: 247.0, g: 251.0, b: 255.0), high = (r: 8.0, g: 69.0, b: 148.0)
        func channel(_ a: Double, _ b: Double) -> Int { Int((a + (b - a) * t).rounded()) }
        return "#" + [channel(low.r, high.r), channel(low.g, high.g), channel(low.b, high.b)]
            .map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// The mark of a series' points, so that series drawn on top of each other stay told apart:
/// a filled circle, a hollow square, a filled diamond, a hollow triangle, in turn.
enum Marker: CaseIterable {
    case circle, square, diamond, triangle

    /// The marker of the `index`-th series.
    static func of(_ index: Int) -> Marker {
        allCases[index % allCases.count]
    }

    /// The mark centred on (`x`, `y`), `radius` being half its size, `opacity` its ink's.
    func element(x: Double, y: Double, radius: Double, color: String, opacity: Double) -> SVGElement {
        switch self {
        case .circle:
            return SVGElement.circle(x: x, y: y, radius: radius).fill(color).attribute("fill-opacity", opacity)
        case .square:
            let side = radius * 1.7
            return SVGElement.rect(x: x - side / 2, y: y - side / 2, width: side, height: side).fill("none")
                .stroke(color, width: 1.6).attribute("stroke-opacity", opacity)
        case .diamond:
            let r = radius * 1.25
            return SVGElement.polygon([(x, y - r), (x + r, y), (x, y + r), (x - r, y)]).fill(color)
                .attribute("fill-opacity", opacity)
        case .triangle:
            let r = radius * 1.3
            return SVGElement.polygon([(x, y - r), (x + r * 0.87, y + r / 2), (x - r * 0.87, y + r / 2)]).fill("none")
                .stroke(color, width: 1.6).attribute("stroke-opacity", opacity)
        }
    }
}
