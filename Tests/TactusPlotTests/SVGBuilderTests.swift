import Foundation
import TactusDetector
import TactusTestSupport
import Testing
@testable import TactusPlot

@Suite struct SVGBuilderTests {
    @Test func documentIsWellFormedAndEscapesText() throws {
        let tricky = #"Rock & Roll <live> "quoted" 'single' ✓"#
        let document = SVGDocument(width: 200, height: 100, title: tricky, elements: [
            SVGElement.group(class: "things", [
                SVGElement.rect(x: 1.234, y: 2, width: 10, height: -5).fill("#FF0000"),
                SVGElement.text(tricky, x: 5, y: 20, anchor: "middle").attribute("data-note", tricky),
                SVGElement.polyline([(0, 0), (10.5, 20.25)]).stroke("#000", width: 2),
            ])
        ])
        let root = try ParsedSVG.parse(document.render())
        #expect(root.name == "svg")
        #expect(root.attributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root.attributes["viewBox"] == "0 0 200 100")
        #expect(root.children.first?.name == "title" && root.children.first?.text == tricky)
        let group = try #require(root.all(class: "things").first)
        #expect(group.children.map(\.name) == ["rect", "text", "polyline"])
        let rect = group.children[0]
        #expect(rect.attributes["x"] == "1.23" && rect.attributes["height"] == "0" && rect.attributes["fill"] == "#FF0000")
        #expect(group.children[1].text == tricky && group.children[1].attributes["data-note"] == tricky)
        #expect(group.children[1].attributes["text-anchor"] == "middle")
        #expect(group.children[2].attributes["points"] == "0,0 10.5,20.25")
        #expect(group.children[2].attributes["fill"] == "none")
    }

    /// A title a client chose (a file name, a tag) cannot reorder or hide what the figure shows:
    /// control characters and bidirectional overrides are shown escaped, as on the pages.
    @Test func controlCharactersAndBidiOverridesAreShownEscaped() throws {
        let hostile = "rtl\u{202E}evil3pm.mp3 line1\nline2\u{1B}]0;pwned\u{07}"
        let shown = #"rtl\u{202E}evil3pm.mp3 line1\x0Aline2\x1B]0;pwned\x07"#
        let document = SVGDocument(width: 200, height: 100, title: hostile, elements: [
            SVGElement.text(hostile, x: 5, y: 20).attribute("data-note", hostile)
        ])
        let rendered = document.render()
        #expect(!rendered.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x1B || $0.value == 0x07 })
        let root = try ParsedSVG.parse(rendered)
        #expect(root.children.first?.text == shown)
        let text = try #require(root.all { $0.name == "text" }.first)
        #expect(text.text == shown && text.attributes["data-note"] == shown)
    }

    @Test func controlCharactersXMLCannotHoldAreShownEscapedSoTheXMLStaysValid() throws {
        let document = SVGDocument(width: 10, height: 10, title: "a\u{1}b\u{0}c", elements: [])
        let root = try ParsedSVG.parse(document.render())
        #expect(root.children.first?.text == #"a\x01b\x00c"#)
    }

    @Test func numbersAreCompact() {
        #expect(SVGNumber.format(12) == "12")
        #expect(SVGNumber.format(3.5) == "3.5")
        #expect(SVGNumber.format(-0.254) == "-0.25")
        #expect(SVGNumber.format(1e-9) == "0")
        #expect(SVGNumber.format(.nan) == "0")
        #expect(SVGNumber.format(100.999) == "101")
    }

    @Test func attributesReplaceEarlierValues() {
        let element = SVGElement("rect").fill("red").fill("blue")
        #expect(element.attributes.count == 1 && element[attribute: "fill"] == "blue")
    }

    @Test func scalesAndTicks() {
        let scale = LinearScale(domain: 0...10, range: (100, 0))
        #expect(scale(0) == 100 && scale(10) == 0 && scale(2.5) == 75)
        #expect(Ticks.nice(in: 0...200, count: 5) == [0, 50, 100, 150, 200])
        #expect(Ticks.nice(in: 93...131, count: 5) == [100, 110, 120, 130])
        #expect(Ticks.nice(in: 93...131, count: 8) == [95, 100, 105, 110, 115, 120, 125, 130])
        #expect(Ticks.rounded(93...131, count: 5) == 90...140)
        #expect(Ticks.label(0.25, step: 0.05) == "0.25")
        #expect(Ticks.label(120, step: 20) == "120")
        // An empty domain is widened instead of dividing by zero.
        #expect(LinearScale(domain: 5...5, range: (0, 10))(5) == 5)
    }
}
