import ArgumentParser
import Foundation
import TactusAnalysis
import TactusDetector
import TactusTestSupport

/// `tactus-bench compound`: how songs in compound metre (three eighths a beat) are read.
struct CompoundMetreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compound",
        abstract: "Songs in compound metre (12/8, a jig in 6/8) synthesised at known tempi: how many each detector reads at the beat, at 3/2 of it, or elsewhere.",
        discussion: """
            Neither shared corpus has a song in 6/8 or 12/8, and a detector that groups pulses by \
            two reads such a song at 3/2 of its beat (two eighths instead of three). Each \
            --pattern (twelve-eight: kick on 1 and 3, snare on 2 and 4, hi-hat on every eighth; \
            jig: kick on the first and third eighth, snare on the second beat) is synthesised at \
            each --bpm (the dotted quarter's tempo) for --seconds, and analysed by every built-in \
            detector (default presets; beatnet advisory, as ever) and the consensus. Printed per detector: Acc1, Acc2, and \
            how many songs are read at 3/2 (or 3/4) of the beat, the error Acc2 does not forgive. \
            A synthetic drum pattern is a narrow proxy for compound music: a measurement to \
            follow, not a set to tune on.
            """)

    @Option(help: "Patterns: twelve-eight, jig (repeatable).")
    var pattern: [String] = ["twelve-eight", "jig"]

    @Option(help: "Tempi of the dotted quarter, in BPM (repeatable).")
    var bpm: [Double] = [50, 60, 70, 80, 90, 100, 110, 120]

    @Option(help: "Length of each song in seconds.")
    var seconds: Double = 60

    @Flag(help: "Print one JSON object.")
    var json = false

    static let patterns: [String: Synth.Pattern] = ["twelve-eight": .twelveEight, "jig": .jig]

    func validate() throws {
        if let unknown = pattern.first(where: { Self.patterns[$0] == nil }) {
            throw ValidationError("--pattern '\(unknown)' is not one of \(Self.patterns.keys.sorted().joined(separator: ", ")).")
        }
        guard bpm.allSatisfy({ (30...200).contains($0) }) else { throw ValidationError("--bpm must be between 30 and 200.") }
        guard (20...600).contains(seconds) else { throw ValidationError("--seconds must be between 20 and 600.") }
    }

    /// One reader's tally over the songs.
    struct Tally: Encodable {
        var songs = 0
        var acc1 = 0
        var acc2 = 0
        /// Read at 3/2 or 3/4 of the beat (two eighths, or four).
        var threeTwo = 0
        var readings: [String] = []
    }

    func run() throws {
        let rate = 22_050.0
        let analyzer = SongAnalyzer(detectors: try BuiltinDetectors.registry.names.map { try BuiltinDetectors.registry.make($0) })
        var tallies: [String: Tally] = [:]
        for name in pattern {
            for tempo in bpm {
                let samples = Synth.drumPattern(bpm: tempo, seconds: seconds, sampleRate: rate, pattern: Self.patterns[name]!)
                let output = analyzer.analyze(samples: samples, sampleRate: rate)
                let readings = output.analyses.map { ($0.detector, $0.bpm) } + [("consensus", output.consensus.bpm)]
                for (reader, found) in readings {
                    var tally = tallies[reader] ?? Tally()
                    tally.songs += 1
                    if TempoRelation.acc1(found, tempo) { tally.acc1 += 1 }
                    if TempoRelation.acc2(found, tempo) { tally.acc2 += 1 }
                    if let found, [1.5, 0.75].contains(where: { TempoRelation.matches(found, tempo * $0) }) { tally.threeTwo += 1 }
                    tally.readings.append("\(name)@\(format(tempo)):\(found.map(format) ?? "none")")
                    tallies[reader] = tally
                }
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(tallies), as: UTF8.self))
            return
        }
        print("Compound metre: \(pattern.joined(separator: ", ")) at \(bpm.map(format).joined(separator: ", ")) BPM (dotted quarter), \(format(seconds)) s each")
        let width = tallies.keys.map(\.count).max() ?? 0
        for reader in tallies.keys.sorted() {
            let tally = tallies[reader]!
            let percent = { (count: Int) in String(format: "%5.1f %%", 100 * Double(count) / Double(max(tally.songs, 1))) }
            print("  " + reader.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  Acc1 \(percent(tally.acc1))  Acc2 \(percent(tally.acc2))  at 3/2 or 3/4: \(tally.threeTwo) of \(tally.songs)")
            print("    " + tally.readings.joined(separator: " "))
        }
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
