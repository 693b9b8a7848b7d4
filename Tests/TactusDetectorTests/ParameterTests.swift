import Foundation
import Testing
import TactusDetector

/// A detector declaration exercising every parameter kind.
private let descriptor = DetectorDescriptor(
    name: "example", version: "1", summary: "test declaration",
    specific: [
        ParameterSpec("bands", .integer(1...32), default: .number(6), presets: ["classic": .number(4)], summary: "band count"),
        ParameterSpec("window_s", .number(1...30), default: .number(8), summary: "window length"),
        ParameterSpec("edges_hz", .increasingNumbers(range: 0...24000, count: 2...10), default: .numbers([0, 200, 400]), summary: "band edges"),
    ])

@Suite struct ParameterResolutionTests {
    @Test func defaultsComeFromThePreset() throws {
        let defaults = try descriptor.resolve()
        #expect(defaults.text("preset") == "default")
        #expect(defaults.integer("bands") == 6)
        #expect(defaults.number("min_bpm") == 60 && defaults.number("max_bpm") == 200)
        let classic = try descriptor.resolve(ParameterSet(["preset": .text("classic")]))
        #expect(classic.integer("bands") == 4)
        let overridden = try descriptor.resolve(ParameterSet(["preset": .text("classic"), "bands": .number(9)]))
        #expect(overridden.integer("bands") == 9)
    }

    @Test func unknownNamesAreRejectedWithTheKnownOnes() {
        #expect(throws: ParameterError.unknownParameter(detector: "example", parameter: "bandz", known: descriptor.parameters.map(\.name))) {
            try descriptor.resolve(ParameterSet(["bandz": .number(3)]))
        }
    }

    @Test(arguments: [
        ("bands", ParameterValue.number(33)), ("bands", .number(2.5)), ("bands", .number(1e300)),
        ("bands", .number(-.infinity)), ("window_s", .number(.nan)), ("window_s", .text("long")),
        ("edges_hz", .numbers([400, 200])), ("edges_hz", .numbers([0])), ("preset", .text("fancy")),
        ("min_bpm", .number(0)),
    ])
    func outOfRangeValuesNameTheParameter(name: String, value: ParameterValue) {
        do {
            _ = try descriptor.resolve(ParameterSet([name: value]))
            Issue.record("\(name) = \(value) was accepted")
        } catch {
            guard case .outOfRange(_, let parameter, _, let accepted) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(parameter == name)
            #expect(!accepted.isEmpty)
        }
    }

    @Test func minimumMustBeBelowMaximum() {
        #expect(throws: ParameterError.self) {
            try descriptor.resolve(ParameterSet(["min_bpm": .number(150), "max_bpm": .number(120)]))
        }
        // A range narrower than an octave is allowed.
        #expect((try? descriptor.resolve(ParameterSet(["min_bpm": .number(120), "max_bpm": .number(150)]))) != nil)
    }

    @Test func commandLineAssignmentsAreParsedByKind() throws {
        let resolved = try descriptor.resolve(assignments: ["bands=12", "edges_hz=0, 100,2000", "preset=classic"])
        #expect(resolved.integer("bands") == 12)
        #expect(resolved.numbers("edges_hz") == [0, 100, 2000])
        #expect(throws: ParameterError.self) { try descriptor.resolve(assignments: ["bands"]) }
        #expect(throws: ParameterError.self) { try descriptor.resolve(assignments: ["bands=lots"]) }
    }

    @Test func canonicalJSONIsSortedAndStable() throws {
        let resolved = try descriptor.resolve()
        let json = resolved.canonicalJSON
        #expect(json.hasPrefix("{\"bands\":6,\"edges_hz\":[0,200,400],\"max_bpm\":200,"))
        let decoded = try JSONDecoder().decode(ParameterSet.self, from: Data(json.utf8))
        #expect(decoded == resolved)
        #expect(decoded.canonicalJSON == json)
    }
}

@Suite struct TempoRelationTests {
    @Test func acc1AndAcc2FollowMIREX() {
        #expect(TempoRelation.acc1(124, 120))
        #expect(!TempoRelation.acc1(125, 120))
        #expect(TempoRelation.acc2(240, 120) && TempoRelation.acc2(60, 120) && TempoRelation.acc2(40, 120) && TempoRelation.acc2(360, 120))
        #expect(!TempoRelation.acc2(80, 120))
        #expect(!TempoRelation.acc2(nil, 120))
        #expect(TempoRelation.factor(of: 61, relativeTo: 120) == 0.5)
    }
}
