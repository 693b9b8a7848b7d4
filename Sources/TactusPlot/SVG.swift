import Foundation
import TactusModel

/// A node of an SVG document: an element or character data.
public enum SVGNode: Sendable, Hashable {
    case element(SVGElement)
    case text(String)
}

/// One SVG element: a name, attributes in the order they were set, and children.
///
/// Build elements with the constructors (``rect(x:y:width:height:)``, ``line(from:to:)``,
/// ``text(_:x:y:)``...) and chain the modifiers, each returning a changed copy:
///
/// ```swift
/// let bar = SVGElement.rect(x: 10, y: 20, width: 8, height: 100)
///     .fill("#0072B2")
///     .attribute("class", "bar")
/// let group = SVGElement.group(class: "series", [bar])
/// ```
///
/// Attribute values and text are escaped when the document is rendered, so any string
/// (a song title with `&` or `<`) is safe to pass; a figure is shown to a person, so control
/// characters and bidirectional overrides are shown as `\x1B` and `\u{202E}` there
/// (``TactusModel/ShownText``), as on every page and in every command.
public struct SVGElement: Sendable, Hashable {
    public var name: String
    public var attributes: [Attribute]
    public var children: [SVGNode]

    /// One `name="value"` pair.
    public struct Attribute: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    public init(_ name: String, attributes: [(String, String)] = [], children: [SVGNode] = []) {
        self.name = name
        self.attributes = attributes.map { Attribute(name: $0.0, value: $0.1) }
        self.children = children
    }

    /// The value of the attribute `name`, if set.
    public subscript(attribute name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// A copy with the attribute `name` set to `value` (replacing an earlier value).
    public func attribute(_ name: String, _ value: String) -> SVGElement {
        var copy = self
        if let index = copy.attributes.firstIndex(where: { $0.name == name }) {
            copy.attributes[index].value = value
        } else {
            copy.attributes.append(Attribute(name: name, value: value))
        }
        return copy
    }

    /// A copy with the numeric attribute `name` set, written compactly (see ``SVGNumber``).
    public func attribute(_ name: String, _ value: Double) -> SVGElement {
        attribute(name, SVGNumber.format(value))
    }

    public func fill(_ color: String) -> SVGElement { attribute("fill", color) }

    public func stroke(_ color: String, width: Double = 1) -> SVGElement {
        attribute("stroke", color).attribute("stroke-width", width)
    }

    public func opacity(_ value: Double) -> SVGElement { attribute("opacity", min(max(value, 0), 1)) }

    public func dashed(_ pattern: String = "6 4") -> SVGElement { attribute("stroke-dasharray", pattern) }

    /// A copy with `children` appended.
    public func appending(_ children: [SVGElement]) -> SVGElement {
        var copy = self
        copy.children += children.map(SVGNode.element)
        return copy
    }

    // MARK: - Shapes

    public static func rect(x: Double, y: Double, width: Double, height: Double) -> SVGElement {
        SVGElement("rect").attribute("x", x).attribute("y", y).attribute("width", max(width, 0))
            .attribute("height", max(height, 0))
    }

    public static func line(from start: (x: Double, y: Double), to end: (x: Double, y: Double)) -> SVGElement {
        SVGElement("line").attribute("x1", start.x).attribute("y1", start.y).attribute("x2", end.x)
            .attribute("y2", end.y)
    }

    public static func circle(x: Double, y: Double, radius: Double) -> SVGElement {
        SVGElement("circle").attribute("cx", x).attribute("cy", y).attribute("r", radius)
    }

    /// An open line through `points` (no fill).
    public static func polyline(_ points: [(x: Double, y: Double)]) -> SVGElement {
        SVGElement("polyline").attribute("points", pointList(points)).fill("none")
    }

    /// A closed shape through `points`.
    public static func polygon(_ points: [(x: Double, y: Double)]) -> SVGElement {
        SVGElement("polygon").attribute("points", pointList(points))
    }

    /// Text anchored at (`x`, `y`) (the baseline), `anchor` being `start`, `middle` or `end`.
    public static func text(_ content: String, x: Double, y: Double, size: Double = 12, anchor: String = "start")
        -> SVGElement
    {
        var element = SVGElement("text").attribute("x", x).attribute("y", y).attribute("font-size", size)
        if anchor != "start" { element = element.attribute("text-anchor", anchor) }
        element.children = [.text(content)]
        return element
    }

    /// A `<g>` grouping `children`, with a `class` naming what it is (`axis`, `series`...).
    public static func group(class name: String? = nil, _ children: [SVGElement]) -> SVGElement {
        let group = SVGElement("g", children: children.map(SVGNode.element))
        return name.map { group.attribute("class", $0) } ?? group
    }

    private static func pointList(_ points: [(x: Double, y: Double)]) -> String {
        points.map { SVGNumber.format($0.x) + "," + SVGNumber.format($0.y) }.joined(separator: " ")
    }
}

/// A complete SVG image: its size in pixels and its elements, rendered as a standalone
/// XML document that browsers, `rsvg-convert` and XML parsers read.
public struct SVGDocument: Sendable, Hashable {
    public var width: Double
    public var height: Double
    /// A title for the whole image (the `<title>` element: what viewers show as its name).
    public var title: String
    public var elements: [SVGElement]

    public init(width: Double, height: Double, title: String, elements: [SVGElement] = []) {
        self.width = width
        self.height = height
        self.title = title
        self.elements = elements
    }

    /// The document as UTF-8 XML text.
    public func render() -> String {
        let root = SVGElement("svg")
            .attribute("xmlns", "http://www.w3.org/2000/svg")
            .attribute("width", width).attribute("height", height)
            .attribute("viewBox", "0 0 \(SVGNumber.format(width)) \(SVGNumber.format(height))")
            .attribute("font-family", "DejaVu Sans, Helvetica, Arial, sans-serif")
            .appending([SVGElement("title", children: [.text(title)])] + elements)
        var output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        Self.write(root, depth: 0, to: &output)
        return output
    }

    private static func write(_ element: SVGElement, depth: Int, to output: inout String) {
        let indent = String(repeating: " ", count: depth)
        output += indent + "<" + element.name
        for attribute in element.attributes {
            output += " \(attribute.name)=\"\(shown(attribute.value))\""
        }
        if element.children.isEmpty {
            output += "/>\n"
            return
        }
        // Elements with text keep it on their line: whitespace inside <text> is visible.
        if element.children.allSatisfy({ if case .text = $0 { true } else { false } }) {
            output += ">"
            for case .text(let text) in element.children { output += shown(text) }
            output += "</\(element.name)>\n"
            return
        }
        output += ">\n"
        for child in element.children {
            switch child {
            case .element(let child): write(child, depth: depth + 1, to: &output)
            case .text(let text): output += indent + " " + shown(text) + "\n"
            }
        }
        output += indent + "</\(element.name)>\n"
    }

    /// `text` as a reader of the figure sees it: control characters escaped, then XML's own.
    private static func shown(_ text: String) -> String {
        XMLText.escaped(ShownText.escaped(text))
    }
}

/// How coordinates and sizes are written: at most two decimals, no trailing zeros, no
/// exponent (`12`, `3.5`, `-0.25`), so the files stay small and every SVG reader accepts them.
public enum SVGNumber {
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int64(rounded)) }
        var text = String(format: "%.2f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
