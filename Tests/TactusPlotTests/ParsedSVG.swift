import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// An SVG file parsed back with Foundation's `XMLParser`: proof that it is well-formed XML,
/// and a tree to look for the expected elements in.
final class ParsedSVG: NSObject, XMLParserDelegate {
    final class Node {
        let name: String
        let attributes: [String: String]
        var children: [Node] = []
        var text = ""

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }

        /// Every node of the subtree (this one first) that satisfies `matches`.
        func all(where matches: (Node) -> Bool) -> [Node] {
            (matches(self) ? [self] : []) + children.flatMap { $0.all(where: matches) }
        }

        /// Nodes whose `class` attribute lists `name`.
        func all(class name: String) -> [Node] {
            all { ($0.attributes["class"] ?? "").split(separator: " ").contains(Substring(name)) }
        }

        /// All the text of the subtree.
        var allText: String { text + children.map(\.allText).joined() }
    }

    private var stack: [Node] = []
    private(set) var root: Node?

    /// Parses `xml`; records a test failure (with the parser's error) when it is not well-formed.
    static func parse(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Node {
        let delegate = ParsedSVG()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        let parsed = parser.parse()
        #expect(parsed, "not well-formed XML: \(String(describing: parser.parserError))", sourceLocation: sourceLocation)
        return try #require(delegate.root, sourceLocation: sourceLocation)
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let node = Node(name: elementName, attributes: attributes)
        stack.last?.children.append(node)
        if stack.isEmpty { root = node }
        stack.append(node)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        stack.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        stack.last?.text += string
    }
}
