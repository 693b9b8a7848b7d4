import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG file parsed back with Foundation's `XMLParser`: proof that it is well-formed XML,
/// and a tree to look for the expected elements in.
public final class ParsedSVG: NSObject, XMLParserDelegate {
    /// Why a text is not a well-formed SVG document.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// An element: its name, attributes, children and text.
    public final class Node {
        public let name: String
        public let attributes: [String: String]
        public internal(set) var children: [Node] = []
        public internal(set) var text = ""

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }

        /// Every node of the subtree (this one first) that satisfies `matches`.
        public func all(where matches: (Node) -> Bool) -> [Node] {
            (matches(self) ? [self] : []) + children.flatMap { $0.all(where: matches) }
        }

        /// Nodes whose `class` attribute lists `name`.
        public func all(class name: String) -> [Node] {
            all { ($0.attributes["class"] ?? "").split(separator: " ").contains(Substring(name)) }
        }

        /// All the text of the subtree.
        public var allText: String { text + children.map(\.allText).joined() }
    }

    private var stack: [Node] = []
    private(set) var root: Node?

    /// Parses `xml`; throws (with the parser's error) when it is not well-formed.
    public static func parse(_ xml: String) throws -> Node {
        let delegate = ParsedSVG()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        guard parser.parse(), let root = delegate.root else {
            throw Failure(description: "not well-formed XML: \(String(describing: parser.parserError))")
        }
        return root
    }

    public func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let node = Node(name: elementName, attributes: attributes)
        stack.last?.children.append(node)
        if stack.isEmpty { root = node }
        stack.append(node)
    }

    public func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        stack.removeLast()
    }

    public func parser(_ parser: XMLParser, foundCharacters string: String) {
        stack.last?.text += string
    }
}
