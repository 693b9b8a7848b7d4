import Foundation
import TactusPlot
import TactusTestSupport
import Testing

@Suite struct CadenceFigureTests {
    @Test func dotsPerWindowWithStepsBandsWhereStillAndNoLineAcrossAPause() throws {
        var windows: [CadenceFigure.Window] = []
        for index in 0..<20 {
            let start = Double(index) * 2
            let kind: CadenceFigure.Window.Kind = switch index {
            case 8..<11: .still
            case 15: .irregular
            default: .steps(cadence: 160 + Double(index), confidence: 0.8)
            }
            windows.append(CadenceFigure.Window(start: start, end: start + 10, kind: kind))
        }
        let root = try ParsedSVG.parse(
            CadenceFigure(title: "Cadence of run.csv", windows: windows, duration: 48, overall: 168).document().render())
        let dots = root.all { $0.name == "circle" }
        #expect(dots.count == 16)
        #expect(dots.first?.attributes["data-cadence"] == "160")
        #expect(dots.first?.attributes["data-time"] == "5")
        #expect(root.all { $0.name == "polyline" }.count == 3, "three runs of windows with steps")
        #expect(root.all(class: "still").first?.children.count == 1)
        #expect(root.all(class: "irregular").first?.children.count == 1)
        #expect(root.all(class: "overall").count == 1)
        #expect(root.all(class: "subtitle").first?.allText.contains("overall 168.0 steps/min") == true)
    }

    @Test func aRecordingWithoutStepsSaysSo() throws {
        let windows = [CadenceFigure.Window(start: 0, end: 10, kind: .still)]
        let root = try ParsedSVG.parse(CadenceFigure(title: "still", windows: windows, duration: 12, overall: nil).document().render())
        #expect(root.all { $0.name == "circle" }.isEmpty)
        #expect(root.all(class: "note").first?.allText == "no window with steps")
    }
}
