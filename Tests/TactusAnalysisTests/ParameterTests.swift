import Foundation
import Testing
import TactusAnalysis
import TactusDetector

@Suite struct ParameterTests {
    let registry = BuiltinDetectors.registry

    @Test func theRegistryListsTheCombFilterWithItsCommonParameters() throws {
        let descriptor = try #require(registry.descriptor(named: "comb-filter"))
        #expect(descriptor.parameters.prefix(3).map(\.name) == ["preset", "min_bpm", "max_bpm"])
        #expect(descriptor.parameter("window_s") != nil && descriptor.parameter("hop_s") != nil)
    }

    @Test func unknownNamesAreErrorsListingTheKnownOnes() {
        #expect(throws: ParameterError.self) { try registry.descriptor(named: "comb-filter")!.resolve(assignments: ["tempo=3"]) }
        do {
            _ = try registry.descriptor(named: "comb-filter")!.resolve(assignments: ["tempo=3"])
        } catch {
            guard case .unknownParameter(let detector, let parameter, let known) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(detector == "comb-filter" && parameter == "tempo" && known.contains("window_s"))
        }
        #expect(throws: ParameterError.unknownDetector(name: "tap", known: registry.names)) { try registry.make("tap") }
    }

    @Test(arguments: [("min_bpm", "10"), ("max_bpm", "401"), ("pulses", "2.5"), ("preset", "modern"),
                      ("band_edges_hz", "0,400,200"), ("window_s", "abc")])
    func outOfRangeValuesNameTheParameterAndTheAcceptedValues(name: String, value: String) {
        do {
            _ = try registry.descriptor(named: "comb-filter")!.resolve(assignments: ["\(name)=\(value)"])
            Issue.record("\(name)=\(value) was accepted")
        } catch {
            guard case .outOfRange(_, let parameter, let given, let accepted) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(parameter == name && given == value && !accepted.isEmpty)
            #expect(error.description.contains(name))
        }
    }

    @Test(arguments: [["min_bpm=120", "max_bpm=120"], ["min_bpm=150", "max_bpm=100"], ["window_s=4", "hop_s=6"],
                      ["window_s=2", "min_bpm=40"]])
    func inconsistentValuesAreErrors(assignments: [String]) {
        #expect(throws: ParameterError.self) {
            let descriptor = registry.descriptor(named: "comb-filter")!
            _ = try registry.make("comb-filter", parameters: descriptor.resolve(assignments: assignments))
        }
    }

    @Test func aRangeNarrowerThanAnOctaveIsAllowed() throws {
        let detector = try registry.make("comb-filter", parameters: ParameterSet(["min_bpm": .number(100), "max_bpm": .number(150)]))
        #expect(detector.parameters.number("max_bpm") == 150)
    }

    @Test func theClassicPresetIsTheSourceDocumentsConfiguration() throws {
        let detector = try registry.make("comb-filter", parameters: ParameterSet(["preset": .text("classic")]))
        let parameters = detector.parameters
        #expect(parameters.text("analysis") == "excerpt")
        #expect(parameters.numbers("band_edges_hz") == [0, 1_000, 2_000, 4_000, 8_000, 16_000, 22_050])
        #expect(parameters.integer("pulses") == 3)
        #expect(parameters.integer("excerpt_samples") == 131_072)
        #expect(parameters.number("smoothing_s") == 0.4)
        // An explicit value beats the preset's.
        let tuned = try registry.make("comb-filter", parameters: ParameterSet(["preset": .text("classic"), "pulses": .number(4)]))
        #expect(tuned.parameters.integer("pulses") == 4)
    }

    @Test func parametersSurviveAJSONRoundTrip() throws {
        let detector = try registry.make("comb-filter", parameters: ParameterSet(["preset": .text("classic")]))
        let json = detector.parameters.canonicalJSON
        let decoded = try JSONDecoder().decode(ParameterSet.self, from: Data(json.utf8))
        #expect(decoded == detector.parameters)
    }
}
